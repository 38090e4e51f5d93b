package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
)

// KafkaConfig says where the intents go.
type KafkaConfig struct {
	Brokers []string
	Topic   string // DefaultIntentsTopic when empty
	// WriteTimeout bounds one produce request; 0 means 10 s.
	WriteTimeout time.Duration
	Auth         KafkaAuth
}

// KafkaPublisher publishes intents with a kafka-go Writer: key room/visitor
// through the hash balancer, acknowledged by all in-sync replicas.
type KafkaPublisher struct {
	w *kafka.Writer
}

var _ Publisher = (*KafkaPublisher)(nil)

// NewKafkaPublisher returns a publisher; it connects on first use.
func NewKafkaPublisher(cfg KafkaConfig) (*KafkaPublisher, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("outbox: kafka publisher: no brokers")
	}
	topic := cfg.Topic
	if topic == "" {
		topic = DefaultIntentsTopic
	}
	wt := cfg.WriteTimeout
	if wt <= 0 {
		wt = 10 * time.Second
	}
	return &KafkaPublisher{w: &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Transport:    cfg.Auth.Transport(),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		// The relay hands over whole batches and waits: a partial batch
		// should leave at once, not after kafka-go's default 1 s linger.
		BatchSize:    1000,
		BatchBytes:   16 << 20,
		BatchTimeout: time.Millisecond,
		// Retry briefly here; longer outages are the relay's to retry, so a
		// down broker fails a pass in well under a second.
		MaxAttempts:     3,
		WriteBackoffMin: 20 * time.Millisecond,
		WriteBackoffMax: 200 * time.Millisecond,
		WriteTimeout:    wt,
		ReadTimeout:     wt,
	}}, nil
}

func (p *KafkaPublisher) Publish(ctx context.Context, intents []Intent) ([]string, error) {
	msgs := make([]kafka.Message, len(intents))
	for i, in := range intents {
		value, err := json.Marshal(in.Message())
		if err != nil {
			return nil, fmt.Errorf("outbox: publish: encode %s: %w", in.ID, err)
		}
		msgs[i] = kafka.Message{
			Key:     MessageKey(in.Room, in.Visitor),
			Value:   value,
			Headers: []kafka.Header{{Key: HeaderIntentID, Value: []byte(in.ID)}, {Key: HeaderIdempotencyKey, Value: []byte(in.Key)}},
		}
	}
	err := p.w.WriteMessages(ctx, msgs...)
	if err == nil {
		ids := make([]string, len(intents))
		for i, in := range intents {
			ids[i] = in.ID
		}
		return ids, nil
	}
	// Per-partition batches fail separately; keep the ones that made it.
	var werrs kafka.WriteErrors
	var ids []string
	if errors.As(err, &werrs) && len(werrs) == len(intents) {
		for i, e := range werrs {
			if e == nil {
				ids = append(ids, intents[i].ID)
			}
		}
	}
	return ids, fmt.Errorf("outbox: publish: %w", err)
}

// Close flushes and closes the writer.
func (p *KafkaPublisher) Close() error {
	if err := p.w.Close(); err != nil {
		return fmt.Errorf("outbox: close publisher: %w", err)
	}
	return nil
}
