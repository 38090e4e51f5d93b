package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/queue"
)

// roomSettings reads a room's settings; queue.Store has it. Optional in
// Sources.Rooms: without it the capacity series are left out.
type roomSettings interface {
	GetRoom(ctx context.Context, room string) (queue.Settings, error)
}

// capacityCollector reports each room's capacity and pause, so that alerts
// can tell "checkout is full" from "admission has stalled with free slots".
type capacityCollector struct {
	src              Sources
	capacity, paused *prometheus.Desc
}

func newCapacityCollector(src Sources) *capacityCollector {
	return &capacityCollector{src: src,
		capacity: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "room_capacity"),
			"The room's capacity: most visitors active in checkout at once.", []string{"room"}, nil),
		paused: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "room_paused"),
			"1 while an operator has paused the room's admissions.", []string{"room"}, nil),
	}
}

func (c *capacityCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.capacity; ch <- c.paused }

func (c *capacityCollector) Collect(ch chan<- prometheus.Metric) {
	rs, ok := c.src.Rooms.(roomSettings)
	if !ok || (c.src.Avail != nil && c.src.Avail.Degraded()) {
		return // degraded: Redis is not asked (see collector)
	}
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	rooms, err := c.src.Rooms.ListRooms(ctx)
	if err != nil {
		return // the main collector reports the source down
	}
	for _, room := range rooms {
		s, err := rs.GetRoom(ctx, room)
		if err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.capacity, prometheus.GaugeValue, float64(s.Capacity), room)
		ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, b2f(s.Paused), room)
	}
}
