package server

import "github.com/waitroom/waitroom/queue"

// ticketViewer is what an answer with a ticket needs of the line: the
// ticket as every answer shows it (queue.View).
type ticketViewer interface {
	View(t queue.Ticket, s *queue.Settings) (queue.View, error)
}
