package rocketmq

import (
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "rocketmq://127.0.0.1:9876", want: "127.0.0.1:9876"},
		{in: "rocketmq://127.0.0.1:9876/", want: "127.0.0.1:9876"},
		{in: "rocketmq://mq.internal:9876", want: "mq.internal:9876"},
		{in: "127.0.0.1:9876", wantErr: "scheme"},
		{in: "http://127.0.0.1:9876", wantErr: "scheme"},
		{in: "rocketmq://127.0.0.1", wantErr: "host:port"},
		{in: "rocketmq://:9876", wantErr: "host:port"},
		{in: "rocketmq://127.0.0.1:", wantErr: "host:port"},
		{in: "rocketmq://u:p@127.0.0.1:9876", wantErr: "only"},
		{in: "rocketmq://127.0.0.1:9876/topic", wantErr: "only"},
		{in: "rocketmq://127.0.0.1:9876?x=1", wantErr: "only"},
		{in: "", wantErr: "scheme"},
		{in: "rocketmq://%zz", wantErr: "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseURL(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseURL(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{
			name: "zero values filled",
			cfg:  Config{NameServer: "127.0.0.1:9876"},
			check: func(t *testing.T, c Config) {
				if c.Topic != DefaultTopic || c.Group != DefaultGroup || c.ProducerGroup != DefaultGroup+"-producer" ||
					c.BrokerAddr != DefaultBrokerAddr || c.SendTimeout != DefaultSendTimeout ||
					c.HandleTimeout != DefaultHandleTimeout || c.Logger == nil || c.InstanceName == "" {
					t.Errorf("defaults not applied: %+v", c)
				}
			},
		},
		{
			name: "set values kept",
			cfg: Config{NameServer: "10.0.0.1:9876", Topic: "T", Group: "g", ProducerGroup: "pg",
				InstanceName: "i", BrokerAddr: "10.0.0.2:10911", SendTimeout: time.Second, HandleTimeout: time.Minute},
			check: func(t *testing.T, c Config) {
				if c.Topic != "T" || c.Group != "g" || c.ProducerGroup != "pg" || c.InstanceName != "i" ||
					c.BrokerAddr != "10.0.0.2:10911" || c.SendTimeout != time.Second || c.HandleTimeout != time.Minute {
					t.Errorf("set values changed: %+v", c)
				}
			},
		},
		{name: "no name server", cfg: Config{}, wantErr: "name server"},
		{name: "name server without port", cfg: Config{NameServer: "127.0.0.1"}, wantErr: "name server"},
		{name: "bad broker", cfg: Config{NameServer: "127.0.0.1:9876", BrokerAddr: "broker"}, wantErr: "broker"},
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

func TestInstanceNamesDiffer(t *testing.T) {
	a, _ := Config{NameServer: "127.0.0.1:9876"}.withDefaults()
	b, _ := Config{NameServer: "127.0.0.1:9876"}.withDefaults()
	if a.InstanceName == b.InstanceName {
		t.Fatalf("two queues got the same instance name %q: they would share one client", a.InstanceName)
	}
}
