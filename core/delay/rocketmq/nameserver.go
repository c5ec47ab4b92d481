package rocketmq

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// The two name-server questions SeatFlow asks itself: client-go's admin
// has no call for the cluster's brokers, and its route lookups are cached
// and take no ctx. Both are plain remoting requests (JSON header, JSON
// body), and name servers check no ACL signature, so a small client does.
const (
	reqGetRouteInfoByTopic  = 105
	reqGetBrokerClusterInfo = 106
	resSuccess              = 0
	resTopicNotExist        = 17

	masterID = 0
	// nameServerTimeout bounds one question to one name server when ctx has
	// no earlier deadline.
	nameServerTimeout = 3 * time.Second
	maxFrame          = 16 << 20
)

var opaque atomic.Int32

// route is what a name server knows of a topic: the brokers holding it.
type route struct {
	// Brokers maps broker name → broker id → address (id 0 is the master).
	Brokers map[string]map[int64]string
}

type routeBody struct {
	BrokerDatas []brokerData `json:"brokerDatas"`
}

type brokerData struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"`
}

// clusterInfo is the name server's view of every cluster.
type clusterInfo struct {
	BrokerAddrTable  map[string]brokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// masters returns broker name → master address of cluster's brokers that
// have a master registered.
func (ci clusterInfo) masters(cluster string) map[string]string {
	out := map[string]string{}
	for _, name := range ci.ClusterAddrTable[cluster] {
		if addr := ci.BrokerAddrTable[name].BrokerAddrs[masterID]; addr != "" {
			out[name] = addr
		}
	}
	return out
}

func (ci clusterInfo) clusters() []string {
	var names []string
	for c := range ci.ClusterAddrTable {
		names = append(names, c)
	}
	sort.Strings(names)
	return names
}

// errNoRoute is a name server's "topic does not exist".
var errNoRoute = errors.New("topic does not exist")

// topicRoute asks the name servers, first to answer wins, for topic's
// route; errNoRoute when none of them knows the topic.
func topicRoute(ctx context.Context, nameServers []string, topic string) (route, error) {
	body, err := askNameServers(ctx, nameServers, reqGetRouteInfoByTopic, map[string]string{"topic": topic})
	if err != nil {
		return route{}, err
	}
	var rb routeBody
	if err := json.Unmarshal(quoteIntKeys(body), &rb); err != nil {
		return route{}, fmt.Errorf("route of %s: decode: %w", topic, err)
	}
	r := route{Brokers: map[string]map[int64]string{}}
	for _, bd := range rb.BrokerDatas {
		r.Brokers[bd.BrokerName] = bd.BrokerAddrs
	}
	return r, nil
}

// brokerClusterInfo asks the name servers for every cluster and broker.
func brokerClusterInfo(ctx context.Context, nameServers []string) (clusterInfo, error) {
	body, err := askNameServers(ctx, nameServers, reqGetBrokerClusterInfo, nil)
	if err != nil {
		return clusterInfo{}, err
	}
	var ci clusterInfo
	if err := json.Unmarshal(quoteIntKeys(body), &ci); err != nil {
		return clusterInfo{}, fmt.Errorf("cluster info: decode: %w", err)
	}
	return ci, nil
}

// BrokerAddrs asks the name servers, first to answer wins, for every
// broker address they have registered, masters and slaves, sorted: what
// runs behind them (the bench finds the brokers' processes with it).
func BrokerAddrs(ctx context.Context, nameServers []string) ([]string, error) {
	ci, err := brokerClusterInfo(ctx, nameServers)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, bd := range ci.BrokerAddrTable {
		for _, a := range bd.BrokerAddrs {
			if !slices.Contains(addrs, a) {
				addrs = append(addrs, a)
			}
		}
	}
	slices.Sort(addrs)
	return addrs, nil
}

// askNameServers tries each name server in turn. errNoRoute from one of
// them is an answer, not a failure to move past: name servers share state
// only through the brokers registering with each, so all of them agree.
func askNameServers(ctx context.Context, nameServers []string, code int, ext map[string]string) ([]byte, error) {
	var errs []error
	for _, ns := range nameServers {
		body, err := askNameServer(ctx, ns, code, ext)
		if err == nil || errors.Is(err, errNoRoute) {
			return body, err
		}
		errs = append(errs, fmt.Errorf("name server %s: %w", ns, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, joinLine(errs...)
}

type remotingHeader struct {
	Code      int               `json:"code"`
	Language  string            `json:"language"`
	Version   int               `json:"version"`
	Opaque    int32             `json:"opaque"`
	Flag      int               `json:"flag"`
	Remark    string            `json:"remark,omitempty"`
	ExtFields map[string]string `json:"extFields,omitempty"`
}

// askNameServer sends one request frame and reads its reply: a 4-byte
// length, a 4-byte header length (top byte 0 = JSON), the header, the body.
func askNameServer(ctx context.Context, addr string, code int, ext map[string]string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, nameServerTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	id := opaque.Add(1)
	header, err := json.Marshal(remotingHeader{Code: code, Language: "GO", Version: 317, Opaque: id, ExtFields: ext})
	if err != nil {
		return nil, err
	}
	frame := make([]byte, 8, 8+len(header))
	binary.BigEndian.PutUint32(frame[0:4], uint32(4+len(header)))
	binary.BigEndian.PutUint32(frame[4:8], uint32(len(header))) // serialize type 0: JSON
	if _, err := conn.Write(append(frame, header...)); err != nil {
		return nil, err
	}
	var lens [8]byte
	if _, err := io.ReadFull(conn, lens[:]); err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	total := binary.BigEndian.Uint32(lens[0:4])
	headerLen := binary.BigEndian.Uint32(lens[4:8]) & 0xFFFFFF
	if total > maxFrame || headerLen+4 > total {
		return nil, fmt.Errorf("reply frame of %d bytes (header %d): not a RocketMQ name server?", total, headerLen)
	}
	rest := make([]byte, total-4)
	if _, err := io.ReadFull(conn, rest); err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	var rh remotingHeader
	if err := json.Unmarshal(rest[:headerLen], &rh); err != nil {
		return nil, fmt.Errorf("reply header: %w", err)
	}
	switch rh.Code {
	case resSuccess:
		return rest[headerLen:], nil
	case resTopicNotExist:
		return nil, errNoRoute
	}
	return nil, fmt.Errorf("request %d: code %d: %s", code, rh.Code, rh.Remark)
}

// quoteIntKeys turns the integer map keys the Java side writes ({0:"a"})
// into JSON ({"0":"a"}); text inside strings is left alone.
func quoteIntKeys(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		out = append(out, c)
		if c != '{' && c != ',' {
			continue
		}
		// After { or , outside a string comes a key: quote it if it is a bare number.
		j := i + 1
		for j < len(b) && (b[j] == ' ' || b[j] == '\n' || b[j] == '\t' || b[j] == '\r') {
			j++
		}
		k := j
		if k < len(b) && b[k] == '-' {
			k++
		}
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k > j && k < len(b) && b[k] == ':' && (b[j] != '-' || k > j+1) {
			out = append(out, b[i+1:j]...)
			out = append(out, '"')
			out = append(out, b[j:k]...)
			out = append(out, '"')
			i = k - 1
		}
	}
	return out
}

// joinLine is errors.Join on one line: start-up errors are printed as one.
func joinLine(errs ...error) error {
	var msgs []string
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}
