package templates

import "time"

// EmbedProps are what the embed page shows before it has a ticket.
type EmbedProps struct {
	Lang                 Lang
	Room, Title, Message string
	Theme                Theme
	// Parent is the embedder's origin, checked against the room's
	// allowed_embedders: the only origin the page talks to.
	Parent string
	// SDK: the frame was made by waitroom-embed.js, which answers the page's
	// "ready" with the visitor's user token or key; without it the page
	// enters at once, by its cookie alone.
	SDK bool
	Now time.Time
}

func (p EmbedProps) title() string {
	if p.Title != "" {
		return p.Title
	}
	return T(p.Lang, "page.title")
}

// waiting is the shared blocks' view of the page: no ticket yet, so every
// state block starts hidden and the script fills in the one that applies.
func (p EmbedProps) waiting() WaitingProps {
	return WaitingProps{Lang: p.Lang, Room: p.Room, Title: p.Title, Message: p.Message, Theme: p.Theme,
		Ticket: TicketView{ETASeconds: -1}, LastUpdate: p.Now, Now: p.Now}
}

// sdkAttr is the data-sdk attribute's value.
func (p EmbedProps) sdkAttr() string {
	if p.SDK {
		return "1"
	}
	return "0"
}
