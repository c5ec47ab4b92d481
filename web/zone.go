package web

// ZoneData is the time zone page's form.
type ZoneData struct {
	Zone  string // the account's zone, or what was entered when it was refused; "" for the server's
	Error string // catalog key, filled in with Zone, or ""
}

// CommonZones are offered as the zone field's suggestions; any IANA name
// is accepted.
var CommonZones = []string{
	"UTC", "Europe/London", "Europe/Dublin", "Europe/Lisbon", "Europe/Paris", "Europe/Berlin", "Europe/Madrid",
	"Europe/Rome", "Europe/Amsterdam", "Europe/Vienna", "Europe/Zurich", "Europe/Stockholm", "Europe/Warsaw",
	"Europe/Athens", "Europe/Istanbul", "Europe/Moscow", "Asia/Dubai", "Asia/Kolkata", "Asia/Bangkok",
	"Asia/Singapore", "Asia/Shanghai", "Asia/Hong_Kong", "Asia/Taipei", "Asia/Seoul", "Asia/Tokyo",
	"Australia/Sydney", "Pacific/Auckland", "America/Sao_Paulo", "America/New_York", "America/Chicago",
	"America/Denver", "America/Los_Angeles", "Africa/Cairo", "Africa/Johannesburg", "Africa/Lagos",
}

// zoneName shows an audited zone; "" is the server's.
func zoneName(p Page, v any) string {
	if s, _ := v.(string); s != "" {
		return s
	}
	return p.T("zone.server")
}

// zoneTexts are the time zone page's catalog entries, kept beside the
// page; init adds them to the catalog before anything reads it.
var zoneTexts = map[string]entry{
	"action.zone":            {"Time zone", "时区"},
	"zone.title":             {"Your time zone", "您的时区"},
	"zone.current":           {"The console shows your times in %s.", "控制台按 %s 显示您的时间。"},
	"zone.label":             {"Time zone (a name such as Europe/Berlin or Asia/Shanghai)", "时区（例如 Europe/Berlin 或 Asia/Shanghai）"},
	"zone.help":              {"Leave it empty for the server's zone.", "留空则使用服务器的时区。"},
	"zone.submit":            {"Save", "保存"},
	"zone.server":            {"the server's zone", "服务器时区"},
	"zone.err_invalid":       {"%q is not a time zone name. Pick one from the list, e.g. Europe/Berlin.", "“%s”不是有效的时区名称。请从列表中选择，例如 Europe/Berlin。"},
	"notice.zone_changed":    {"Time zone saved: times are now shown in it.", "时区已保存，时间将按此时区显示。"},
	"audit.action.time_zone": {"changed their time zone", "修改了自己的时区"},
	"ev.time_zone":           {"time zone", "时区"},
	"ev.previous_time_zone":  {"before", "原时区"},
}

func init() {
	for k, e := range zoneTexts {
		if _, dup := catalog[k]; dup {
			panic("web: catalog key " + k + " defined twice")
		}
		catalog[k] = e
	}
}
