package rocketmq

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
)

// TestBrokerAddrs: the broker addresses, masters and slaves, come from a
// name server's cluster-info reply (integer map keys as the Java side
// writes them); an error code is an error.
func TestBrokerAddrs(t *testing.T) {
	const body = `{"brokerAddrTable":{"broker-b":{"brokerAddrs":{0:"127.0.0.1:20911",1:"127.0.0.1:20921"},"brokerName":"broker-b","cluster":"DefaultCluster"},` +
		`"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a","broker-b"]}}`
	tests := []struct {
		name    string
		header  string
		want    []string
		wantErr bool
	}{
		{name: "masters and a slave", header: `{"code":0,"flag":1,"opaque":1}`, want: []string{"127.0.0.1:10911", "127.0.0.1:20911", "127.0.0.1:20921"}},
		{name: "error code", header: `{"code":1,"flag":1,"opaque":1,"remark":"boom"}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				var lens [8]byte
				if _, err := io.ReadFull(c, lens[:]); err != nil {
					return
				}
				req := make([]byte, binary.BigEndian.Uint32(lens[:4])-4)
				if _, err := io.ReadFull(c, req); err != nil || !strings.Contains(string(req), `"code":106`) {
					return // the client then fails reading the reply
				}
				frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(tt.header)+len(body)))
				frame = binary.BigEndian.AppendUint32(frame, uint32(len(tt.header)))
				_, _ = c.Write(append(append(frame, tt.header...), body...))
			}()
			got, err := BrokerAddrs(context.Background(), []string{ln.Addr().String()})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("brokers %v, want %v", got, tt.want)
			}
		})
	}
}
