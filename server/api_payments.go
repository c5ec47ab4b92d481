package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// Headers of a payment callback.
const (
	headerTimestamp = "X-SeatFlow-Timestamp" // unix seconds
	headerSignature = "X-SeatFlow-Signature" // hex HMAC-SHA256(secret, timestamp + "." + raw body)
)

type paymentRequest struct {
	OrderNo     string `json:"order_no"`
	TxnID       string `json:"txn_id"`
	AmountCents int64  `json:"amount_cents"`
	PaidAt      string `json:"paid_at"` // RFC 3339; optional, default: when received
}

// handlePaymentCallback applies a payment. The signature is checked over the
// raw bytes before anything is decoded, so an unsigned body is never parsed.
func (s *Server) handlePaymentCallback(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	h := c.Request().Header
	err = verifySignature(s.cfg.PaymentSecret, h.Get(headerTimestamp), h.Get(headerSignature), body, time.Now())
	if err != nil && s.cfg.PaymentSecretPrevious != "" { // during a rotation the old secret still signs
		err = verifySignature(s.cfg.PaymentSecretPrevious, h.Get(headerTimestamp), h.Get(headerSignature), body, time.Now())
	}
	if err != nil {
		return err
	}
	if err := requireJSONType(c, body); err != nil {
		return err
	}
	var req paymentRequest
	if err := decodeJSON(body, &req); err != nil {
		return err
	}
	// The gateway may quote the short code the customer paid with. Money
	// for an order nobody knows is recorded under the reference as sent.
	no, err := s.engine.OrderNo(c.Request().Context(), req.OrderNo)
	if errors.Is(err, core.ErrOrderNotFound) {
		no = req.OrderNo
	} else if err != nil {
		return err
	}
	p := core.Payment{OrderNo: no, TxnID: req.TxnID, AmountCents: req.AmountCents}
	if req.PaidAt != "" {
		if p.PaidAt, err = time.Parse(time.RFC3339Nano, req.PaidAt); err != nil {
			return core.Invalidf("paid_at must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
		}
	}
	res, err := s.engine.HandlePayment(c.Request().Context(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"result": string(res)})
}

// verifySignature checks the callback's HMAC in constant time, and that its
// timestamp is within maxClockSkew of now, which bounds replays.
func verifySignature(secret Secret, timestamp, signature string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return badSignature(headerTimestamp + " must be unix seconds")
	}
	if skew := now.Sub(time.Unix(ts, 0)); skew > maxClockSkew || skew < -maxClockSkew {
		return badSignature(headerTimestamp + " is more than 5 minutes away from the server's clock")
	}
	got, err := hex.DecodeString(signature)
	if err != nil {
		return badSignature(headerSignature + " must be hex")
	}
	mac := hmac.New(sha256.New, []byte(secret.Reveal()))
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return badSignature(headerSignature + " does not match")
	}
	return nil
}

func badSignature(msg string) error {
	return &core.Error{Kind: core.KindUnauthorized, Code: "bad_signature", Message: "bad signature: " + msg}
}
