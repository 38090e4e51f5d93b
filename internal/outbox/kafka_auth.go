package outbox

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// KafkaAuth is how every Kafka client connects: TLS and SASL, both
// optional (the zero value is plain TCP without authentication).
type KafkaAuth struct {
	TLS  *tls.Config
	SASL sasl.Mechanism
}

// SASL mechanisms by their flag names.
const (
	SASLPlain       = "plain"
	SASLSCRAMSHA256 = "scram-sha-256"
	SASLSCRAMSHA512 = "scram-sha-512"
)

// NewSASL returns the mechanism named (plain, scram-sha-256 or
// scram-sha-512) for user and password; "" is none.
func NewSASL(mechanism, user, password string) (sasl.Mechanism, error) {
	switch mechanism {
	case "":
		return nil, nil
	case SASLPlain:
		return plain.Mechanism{Username: user, Password: password}, nil
	case SASLSCRAMSHA256, SASLSCRAMSHA512:
		algo := scram.SHA256
		if mechanism == SASLSCRAMSHA512 {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, user, password)
		if err != nil {
			return nil, fmt.Errorf("outbox: kafka sasl: %w", err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("outbox: kafka sasl: unknown mechanism %q", mechanism)
}

// Dialer is for readers (kafka.ReaderConfig.Dialer).
func (a KafkaAuth) Dialer() *kafka.Dialer {
	return &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: a.TLS, SASLMechanism: a.SASL}
}

// Transport is for writers (kafka.Writer.Transport).
func (a KafkaAuth) Transport() *kafka.Transport {
	return &kafka.Transport{Dial: (&net.Dialer{Timeout: 10 * time.Second}).DialContext, TLS: a.TLS, SASL: a.SASL}
}
