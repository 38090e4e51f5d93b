package shop

import (
	"strconv"
	"strings"

	"github.com/waitroom/waitroom/templates"
)

// lang is the page's language: the waiting room's, so a shopper reads the
// shop in the language the line spoke.
type lang = templates.Lang

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// strings of the shop's pages, by language; English is the fallback.
var texts = map[lang]map[string]string{
	templates.English: {
		"title":                "Demo shop checkout",
		"shop":                 "Demo shop",
		"product":              DropName,
		"checkout":             "Checkout",
		"checkout.admitted":    "Your turn has come: you can order now.",
		"checkout.place":       "Place order",
		"stock.out":            "Sold out",
		"stock.one":            "Last one in stock",
		"stock.other":          "{n} left in stock",
		"placed":               "Thank you, your order is placed",
		"placed.usual":         "Your place in checkout was handed back to the next shopper.",
		"sold_out":             "Sorry, it is sold out",
		"sold_out.text":        DropName + " sold out before your order could be placed. Nothing was charged.",
		"error":                "Your order did not go through",
		"error.retry":          "Try again",
		"error.stock":          "The shop cannot reach its stock right now. Please try again.",
		"error.order":          "The order could not be placed. Please try again.",
		"note.slot_later":      "Your place in checkout could not be handed back yet; it frees itself shortly.",
		"too_early":            "Almost there",
		"too_early.text.one":   "Your turn starts in 1 second. This page moves on by itself.",
		"too_early.text.other": "Your turn starts in {n} seconds. This page moves on by itself.",
		"need_ticket":          "Please wait in line first",
		"need_ticket.text":     "Checkout opens for shoppers whose turn has come in the waiting room.",
		"to_line":              "Go to the waiting room",
		"refused":              "This pass does not open this checkout",
		"refused.wrong_room":   "Your entry pass was issued for another sale, not this shop. Go back to the shop where you waited in line; nothing was charged here.",
		"refused.expired":      "Your turn at checkout has ended. Join the line again for a new turn; nothing was charged.",
		"refused.ordered":      "You already placed an order request while the waiting room was down; that is your order. Nothing was charged here.",
		"refused.forged":       "Your entry pass could not be confirmed as one from this shop's waiting room, so checkout cannot open. Nothing was charged.",
	},
	templates.Korean: {
		"title":                "데모 상점 결제",
		"shop":                 "데모 상점",
		"product":              "한정판 스니커즈",
		"checkout":             "결제",
		"checkout.admitted":    "차례가 되었습니다. 지금 주문하실 수 있습니다.",
		"checkout.place":       "주문하기",
		"stock.out":            "품절",
		"stock.one":            "마지막 1개 남음",
		"stock.other":          "재고 {n}개 남음",
		"placed":               "감사합니다. 주문이 완료되었습니다",
		"placed.usual":         "결제 자리는 다음 손님에게 넘겨졌습니다.",
		"sold_out":             "죄송합니다. 품절되었습니다",
		"sold_out.text":        "주문이 완료되기 전에 한정판 스니커즈가 품절되었습니다. 결제된 금액은 없습니다.",
		"error":                "주문이 처리되지 않았습니다",
		"error.retry":          "다시 시도",
		"error.stock":          "지금은 상점이 재고를 확인할 수 없습니다. 다시 시도해 주세요.",
		"error.order":          "주문을 처리할 수 없었습니다. 다시 시도해 주세요.",
		"note.slot_later":      "결제 자리를 아직 넘기지 못했습니다. 잠시 후 저절로 풀립니다.",
		"too_early":            "거의 다 왔습니다",
		"too_early.text.other": "{n}초 후에 차례가 시작됩니다. 이 페이지는 저절로 새로 고쳐집니다.",
		"need_ticket":          "먼저 줄을 서 주세요",
		"need_ticket.text":     "대기실에서 차례가 된 손님에게 결제가 열립니다.",
		"to_line":              "대기실로 가기",
		"refused":              "이 입장권으로는 이 결제를 열 수 없습니다",
		"refused.wrong_room":   "이 입장권은 이 상점이 아닌 다른 판매에서 발급되었습니다. 줄을 섰던 상점으로 돌아가 주세요. 여기서 결제된 금액은 없습니다.",
		"refused.expired":      "결제 차례가 끝났습니다. 새 차례를 받으려면 다시 줄을 서 주세요. 결제된 금액은 없습니다.",
		"refused.ordered":      "대기실 장애 중에 이미 주문 요청을 남기셨고, 그 요청이 주문입니다. 여기서 결제된 금액은 없습니다.",
		"refused.forged":       "이 상점 대기실에서 발급한 입장권인지 확인할 수 없어 결제를 열 수 없습니다. 결제된 금액은 없습니다.",
	},
}

// t returns the text under key in l, else in English, else the key.
func t(l lang, key string) string {
	if s, ok := texts[l][key]; ok {
		return s
	}
	if s, ok := texts[templates.English][key]; ok {
		return s
	}
	return key
}

// tn is t of key's plural form for n ("one" only where the language has it).
func tn(l lang, key string, n int64) string {
	k := key + ".other"
	if n == 1 {
		if _, ok := texts[l][key+".one"]; ok {
			k = key + ".one"
		}
	}
	return strings.ReplaceAll(t(l, k), "{n}", itoa(n))
}

// stockText says how many are left in a shopper's words.
func stockText(l lang, n int64) string {
	switch {
	case n <= 0:
		return t(l, "stock.out")
	case n == 1:
		return t(l, "stock.one")
	}
	return strings.ReplaceAll(t(l, "stock.other"), "{n}", itoa(n))
}

// refusal groups a verdict's reason into the message a shopper can act on.
func refusal(reason string) string {
	switch reason {
	case "wrong_room", "expired", "ordered":
		return reason
	}
	return "forged" // bad signature, unknown key, wrong issuer, malformed
}

// ownRoom: the refused token was this room's, so its line is the way back.
func ownRoom(reason string) bool { return reason == "expired" }
