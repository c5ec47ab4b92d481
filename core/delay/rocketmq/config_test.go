package rocketmq

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		ak, sk  string
		wantErr string
	}{
		{in: "rocketmq://127.0.0.1:9876", want: []string{"127.0.0.1:9876"}},
		{in: "rocketmq://127.0.0.1:9876/", want: []string{"127.0.0.1:9876"}},
		{in: "rocketmq://mq.internal:9876", want: []string{"mq.internal:9876"}},
		{in: "rocketmq://198.18.0.5:9876,198.18.0.6:9876", want: []string{"198.18.0.5:9876", "198.18.0.6:9876"}},
		{in: "rocketmq://ak:sk@ns1:9876,ns2:9876", want: []string{"ns1:9876", "ns2:9876"}, ak: "ak", sk: "sk"},
		{in: "rocketmq://ak:s%40k%2Fx@ns1:9876", want: []string{"ns1:9876"}, ak: "ak", sk: "s@k/x"},
		{in: "127.0.0.1:9876", wantErr: "scheme"},
		{in: "http://127.0.0.1:9876", wantErr: "scheme"},
		{in: "rocketmq://127.0.0.1", wantErr: "host:port"},
		{in: "rocketmq://:9876", wantErr: "host:port"},
		{in: "rocketmq://127.0.0.1:", wantErr: "host:port"},
		{in: "rocketmq://ns1:9876,", wantErr: "host:port"},
		{in: "rocketmq://ns1:9876,,ns2:9876", wantErr: "host:port"},
		{in: "rocketmq://u@127.0.0.1:9876", wantErr: "credentials"},
		{in: "rocketmq://u:@127.0.0.1:9876", wantErr: "credentials"},
		{in: "rocketmq://:p@127.0.0.1:9876", wantErr: "credentials"},
		{in: "rocketmq://127.0.0.1:9876/topic", wantErr: "no path"},
		{in: "rocketmq://127.0.0.1:9876?x=1", wantErr: "no path"},
		{in: "", wantErr: "scheme"},
		{in: "rocketmq://%zz", wantErr: "host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseURL(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseURL(%q) = %+v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				if tt.in != "" && strings.Contains(err.Error(), "sk") {
					t.Errorf("error %q repeats the secret", err)
				}
				return
			}
			if err != nil || !slices.Equal(got.NameServers, tt.want) ||
				got.Credentials.AccessKey != tt.ak || got.Credentials.SecretKey != tt.sk {
				t.Fatalf("ParseURL(%q) = %+v, %v; want %q with %q/%q", tt.in, got, err, tt.want, tt.ak, tt.sk)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	ns := []string{"127.0.0.1:9876"}
	tests := []struct {
		name    string
		cfg     Config
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{
			name: "zero values filled",
			cfg:  Config{NameServers: ns},
			check: func(t *testing.T, c Config) {
				if c.Topic != DefaultTopic || c.Group != DefaultGroup || c.ProducerGroup != DefaultGroup+"-producer" ||
					c.Cluster != DefaultCluster || c.NewGroupLookback != DefaultNewGroupLookback ||
					c.SendTimeout != DefaultSendTimeout || c.NoCreateTopics ||
					c.HandleTimeout != DefaultHandleTimeout || c.Logger == nil || c.InstanceName == "" {
					t.Errorf("defaults not applied: %+v", c)
				}
			},
		},
		{
			name: "set values kept",
			cfg: Config{NameServers: []string{"10.0.0.1:9876", "10.0.0.2:9876"}, Topic: "T", Group: "g", ProducerGroup: "pg",
				InstanceName: "i", Cluster: "C", NoCreateTopics: true, NewGroupLookback: time.Minute,
				SendTimeout: time.Second, HandleTimeout: time.Minute},
			check: func(t *testing.T, c Config) {
				if c.Topic != "T" || c.Group != "g" || c.ProducerGroup != "pg" || c.InstanceName != "i" ||
					c.Cluster != "C" || !c.NoCreateTopics || c.NewGroupLookback != time.Minute ||
					len(c.NameServers) != 2 || c.SendTimeout != time.Second || c.HandleTimeout != time.Minute {
					t.Errorf("set values changed: %+v", c)
				}
			},
		},
		{name: "no name server", cfg: Config{}, wantErr: "no name server"},
		{name: "name server without port", cfg: Config{NameServers: []string{"127.0.0.1"}}, wantErr: "name server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.withDefaults()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("withDefaults() error = %v; want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("withDefaults() error = %v", err)
			}
			tt.check(t, got)
		})
	}
}

func TestQuoteIntKeys(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{0:"127.0.0.1:10911",1:"x"}`, `{"0":"127.0.0.1:10911","1":"x"}`},
		{`{"brokerAddrs":{0:"a:1"},"n":[1,2,3]}`, `{"brokerAddrs":{"0":"a:1"},"n":[1,2,3]}`},
		{`{"s":"{0:\"x,1:"}`, `{"s":"{0:\"x,1:"}`},
		{`{-1:"a"}`, `{"-1":"a"}`},
		{`{"a":-1}`, `{"a":-1}`},
	}
	for _, tt := range tests {
		if got := string(quoteIntKeys([]byte(tt.in))); got != tt.want {
			t.Errorf("quoteIntKeys(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestInstanceNamesDiffer(t *testing.T) {
	a, _ := Config{NameServers: []string{"127.0.0.1:9876"}}.withDefaults()
	b, _ := Config{NameServers: []string{"127.0.0.1:9876"}}.withDefaults()
	if a.InstanceName == b.InstanceName {
		t.Fatalf("two queues got the same instance name %q: they would share one client", a.InstanceName)
	}
}
