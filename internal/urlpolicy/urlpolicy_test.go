package urlpolicy

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		url  string
		rule string // "" = allowed
	}{
		{"https://mcp.example.com/mcp", ""},
		{"https://10.1.2.3/mcp", ""},
		{"http://localhost:3000/mcp", ""},
		{"http://LOCALHOST./mcp", ""},
		{"http://app.localhost:8080/", ""},
		{"http://127.8.9.10:1/", ""},
		{"http://[::1]:8080/", ""},
		{"http://[::ffff:127.0.0.1]/", ""},
		{"http://example.com/", RuleHTTPLocal},
		{"http://10.0.0.1/", RuleHTTPLocal},
		{"http://localhost.evil.example/", RuleHTTPLocal},
		{"http://localhostx/", RuleHTTPLocal},
		{"ws://localhost/", RuleScheme},
		{"ftp://127.0.0.1/", RuleScheme},
		{"https:///nohost", RuleNoHost},
		// Numeric forms some resolvers read as 127.0.0.1 or 169.254.169.254.
		{"http://2130706433/", RuleHTTPLocal},
		{"https://2852039166/", RuleNumeric},
		{"https://0x7f.1/", RuleNumeric},
		{"https://0177.0.0.1/", RuleNumeric},
		{"https://127.1/", RuleNumeric},
		{"http://0x7f.1/", RuleHTTPLocal},
		{"https://1e100.net/", ""},
		{"https://123.example/", ""},
		// Link-local and metadata, every provider, IPv4 and IPv6.
		{"https://169.254.169.254/latest/meta-data", RuleLinkLocal},
		{"https://169.254.42.42/", RuleLinkLocal},
		{"https://169.254.0.23/", RuleLinkLocal},
		{"https://[fe80::a9fe:a9fe%25eth0]/", RuleLinkLocal},
		{"https://[::ffff:169.254.169.254]/", RuleLinkLocal},
		{"https://[::ffff:a9fe:a9fe]/", RuleLinkLocal},
		{"https://[64:ff9b::169.254.169.254]/", RuleLinkLocal},
		{"https://[fd00:ec2::254]/", RuleMetadata},
		{"https://[FD00:EC2:0::254]/", RuleMetadata},
		{"https://[fd00:ec2::23]/", RuleMetadata},
		{"https://[fd20:ce::254]/", RuleMetadata},
		{"https://[fd00:c1::a9fe:a9fe]/", RuleMetadata},
		{"https://[fd00:a9fe:a9fe::1]/", RuleMetadata},
		{"https://[fd00:42::42]/", RuleMetadata},
		{"https://168.63.129.16/", RuleMetadata},
		{"https://100.100.100.200/", RuleMetadata},
		{"https://[::ffff:100.100.100.200]/", RuleMetadata},
		{"https://192.0.0.192/", RuleMetadata},
		{"https://metadata.google.internal/", RuleMetadata},
		{"http://METADATA.google.internal./", RuleMetadata},
		{"https://metadata.tencentyun.com/latest/meta-data", RuleMetadata},
		{"https://api.metadata.cloud.ibm.com/", RuleMetadata},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		err = Check(u)
		var perr *Error
		switch {
		case tc.rule == "" && err != nil:
			t.Errorf("Check(%s) = %v, want allowed", tc.url, err)
		case tc.rule != "" && (!errors.As(err, &perr) || perr.Rule != tc.rule || !errors.Is(err, ErrRefused)):
			t.Errorf("Check(%s) = %v, want the rule %q", tc.url, err, tc.rule)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr         string
		loopbackOnly bool
		rule         string
	}{
		{"127.0.0.1", true, ""},
		{"::1", true, ""},
		{"10.0.0.1", true, RuleHTTPLocal},
		{"93.184.216.34", false, ""},
		{"169.254.169.254", false, RuleLinkLocal},
		{"::ffff:169.254.169.254", false, RuleLinkLocal},
		{"fd00:ec2::254", false, RuleMetadata},
		{"168.63.129.16", false, RuleMetadata},
		{"100.100.100.200", true, RuleMetadata},
	} {
		err := CheckAddr(netip.MustParseAddr(tc.addr), tc.loopbackOnly)
		var perr *Error
		if tc.rule == "" && err != nil || tc.rule != "" && (!errors.As(err, &perr) || perr.Rule != tc.rule) {
			t.Errorf("CheckAddr(%s, %v) = %v, want rule %q", tc.addr, tc.loopbackOnly, err, tc.rule)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost.": true, "a.b.localhost": true, "127.0.0.1": true, "::1": true, "[::1]": true,
		"localhost.com": false, "xlocalhost": false, "10.0.0.1": false, "": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://h.example/mcp", "https://h.example/mcp"},
		{"https://h.example/mcp?api_key=s3cr3t&v=2", "https://h.example/mcp?api_key=***&v=***"},
		{"https://h.example/mcp?key=${env:KEY}", "https://h.example/mcp?key=${env:KEY}"},
		{"https://h.example/mcp?key=pre${env:KEY}", "https://h.example/mcp?key=***"},
		{"https://h.example/mcp?sk-bare-token&a=1", "https://h.example/mcp?***&a=***"},
		{"https://u:s3cr3t@h.example/mcp#s3cr3t", "https://***@h.example/mcp"},
		{"https://ghp_s3cr3t@h.example/mcp", "https://***@h.example/mcp"},
		{"https://u:s3cr3t@h.ex ample/?k=s3cr3t", "https://***@h.ex ample/"},
		{"http://[::1", "http://[::1"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor("tok-Secret/42", "abc", "tok-Secret/42-longer")
	got := r.String("a tok-Secret/42-longer, tok-Secret%2F42 and abc")
	if want := "a ***, *** and abc"; got != want {
		t.Errorf("String = %q, want %q (secrets under 4 bytes are left)", got, want)
	}
	base := errors.New("dial tok-Secret/42: refused")
	err := r.Error(base)
	if err.Error() != "dial ***: refused" || !errors.Is(err, base) {
		t.Errorf("Error = %v (unwraps: %v)", err, errors.Is(err, base))
	}
	var nilR *Redactor
	if nilR.String("x tok") != "x tok" {
		t.Error("a nil Redactor changed text")
	}
	if diff := cmp.Diff([]string{"user", "pass", "s3cr3t", "k=s3cr3t"}, URLSecrets("https://user:pass@h/?k=s3cr3t")); diff != "" {
		t.Errorf("URLSecrets (-want +got):\n%s", diff)
	}
	if strings.Contains(NewRedactor().String("x"), "*") {
		t.Error("an empty Redactor hid something")
	}
}
