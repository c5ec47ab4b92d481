package rocketmq

import (
	"encoding/json"
	"errors"
	"fmt"

	"seatflow/core"
)

// batchBody is a timeout message's body: the timeouts of one or more
// orders, each with its own hop, due time and trace id. A message from a
// version before batches is one order's core.TimeoutMsg on its own, which
// decodeBody still reads.
type batchBody struct {
	Orders []core.TimeoutMsg `json:"orders"`
}

func encodeBody(msgs []core.TimeoutMsg) ([]byte, error) {
	return json.Marshal(batchBody{Orders: msgs})
}

// decodeBody reads either form. Every timeout in it must name its order.
func decodeBody(body []byte) ([]core.TimeoutMsg, error) {
	var b struct {
		batchBody
		core.TimeoutMsg
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, err
	}
	msgs := b.Orders
	switch {
	case msgs == nil && b.OrderNo != "":
		msgs = []core.TimeoutMsg{b.TimeoutMsg}
	case len(msgs) == 0:
		return nil, errors.New("no order_no and no orders")
	}
	for i, m := range msgs {
		if m.OrderNo == "" {
			return nil, fmt.Errorf("orders[%d]: no order_no", i)
		}
	}
	return msgs, nil
}
