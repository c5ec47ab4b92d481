package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"seatflow/core/delay/rocketmq"
	"seatflow/core/testenv"
)

// remotingFrame builds a RocketMQ remoting frame: int32 length, int32
// JSON serialisation (0) and header length, header, body.
func remotingFrame(header, body string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	return append(append(b, header...), body...)
}

// TestNameServerRepliesRewriteLoopbackBrokers: a route reply's loopback
// broker addresses become addresses of proxies that reach those brokers,
// the same proxy each time; other addresses and the header stay; the
// frame's length is that of the rewritten frame.
func TestNameServerRepliesRewriteLoopbackBrokers(t *testing.T) {
	broker, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	d := newDelayedStores(0)
	defer func() {
		if err := d.close(); err != nil {
			t.Error(err)
		}
	}()
	const header = `{"code":0,"flag":1,"opaque":7,"remark":"127.0.0.1:1"}`
	body := `{"brokerDatas":[{"brokerAddrs":{0:"` + broker.Addr().String() + `"}}],"remote":"10.1.2.3:10911"}`
	// Two replies in one stream, as a connection carries them.
	stream := bytes.NewReader(append(remotingFrame(header, body), remotingFrame(header, body)...))
	var proxies []string
	for range 2 {
		out, err := d.nameServerReplies(stream)
		if err != nil {
			t.Fatal(err)
		}
		if n := binary.BigEndian.Uint32(out); int(n) != len(out)-4 {
			t.Fatalf("frame length %d, frame has %d bytes after it", n, len(out)-4)
		}
		hl := int(binary.BigEndian.Uint32(out[4:]) & 0xFFFFFF)
		if got := string(out[8 : 8+hl]); got != header {
			t.Errorf("header %q, want it unchanged", got)
		}
		gotBody := string(out[8+hl:])
		if strings.Contains(gotBody, broker.Addr().String()) || !strings.Contains(gotBody, `"remote":"10.1.2.3:10911"`) {
			t.Fatalf("body %s: want the loopback broker replaced, the other address kept", gotBody)
		}
		proxies = append(proxies, d.brokers[broker.Addr().String()])
	}
	if len(d.brokers) != 1 || proxies[0] == "" || proxies[0] != proxies[1] {
		t.Fatalf("broker proxies %v (each reply %v), want one, reused", d.brokers, proxies)
	}
	c, err := net.Dial("tcp", proxies[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	accepted, err := broker.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	if _, err := io.ReadFull(accepted, make([]byte, 1)); err != nil {
		t.Fatalf("broker did not get the byte sent to its proxy: %v", err)
	}

	if _, err := d.nameServerReplies(bytes.NewReader(remotingFrame(header, "")[:6])); err == nil {
		t.Error("truncated frame accepted")
	}
	bad := remotingFrame(header, body)
	binary.BigEndian.PutUint32(bad[4:], uint32(len(bad))) // header longer than the frame
	if _, err := d.nameServerReplies(bytes.NewReader(bad)); err == nil {
		t.Error("frame with a header longer than itself accepted")
	}
}

// TestRocketMQSendThroughProxies: with the name server behind a proxy, a
// producer's send reaches the real broker, and through a broker proxy (the
// bench's queue-send limit and the server's sends cross the delay).
func TestRocketMQSendThroughProxies(t *testing.T) {
	d := newDelayedStores(2 * time.Millisecond)
	defer func() {
		if err := d.close(); err != nil {
			t.Error(err)
		}
	}()
	u, err := d.rocketmqURL(testenv.RocketMQ(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rocketmq.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	id := randHex(4)
	cfg.Topic, cfg.Group, cfg.Logger = "SEATFLOW_RTT_TEST_"+id, "seatflow-rtt-test-"+id, quietLog()
	cfg.Cluster = testenv.RocketMQCluster()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := rocketmq.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := q.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := q.Send(ctx, limitMsgs(1, time.Now().Add(time.Hour)), 0, time.Hour); err != nil {
		t.Fatalf("send through the proxies: %v", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.brokers) == 0 {
		t.Fatal("the send reached no broker proxy: the name server's route was not rewritten")
	}
	t.Logf("brokers behind proxies: %v", d.brokers)
}
