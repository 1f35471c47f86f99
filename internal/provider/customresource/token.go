package customresource

import (
	"fmt"
	"net/url"
	"strings"
)

// serviceToken is a parsed ServiceToken this package can deliver to.
type serviceToken struct {
	url        string // where the request is POSTed
	web        bool   // ROS web[...]: form (as opposed to a bare http(s) URL)
	sync       bool   // the POST's HTTP response is the response object
	idempotent bool   // Create may be retried on transport errors and 5xx
	function   string // a function token (Lambda ARN, FC token, FunctionGraph URN): delivered by invoking it
}

// supportedForms lists the token forms for messages.
const supportedForms = "supported forms are a cairn function's Lambda ARN, Function Compute token or " +
	"FunctionGraph URN, an http:// or https:// URL, web:URL, web[sync]:URL, web[idempotent]:URL and web[sync,idempotent]:URL"

// parseToken parses a ServiceToken; the error is a user-facing reason. It never quotes the
// token: a URL may carry credentials.
func parseToken(s string) (serviceToken, error) {
	switch {
	case s == "":
		return serviceToken{}, fmt.Errorf("ServiceToken is empty; %s", supportedForms)
	case strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://"):
		if err := checkURL(s); err != nil {
			return serviceToken{}, err
		}
		return serviceToken{url: s}, nil
	case strings.HasPrefix(s, "web:") || strings.HasPrefix(s, "web["):
		return parseWebToken(s)
	}
	if kind := functionOrTopic(s); kind != "" {
		if isFunctionToken(s) {
			return serviceToken{function: s}, nil
		}
		return serviceToken{}, fmt.Errorf("ServiceToken is %s; topic and queue tokens (SNS, MNS) are not "+
			"supported; point the ServiceToken at a cairn function instead; %s", kind, supportedForms)
	}
	return serviceToken{}, fmt.Errorf("ServiceToken is not a form cairn recognises; %s", supportedForms)
}

// functionOrTopic names the kind of a Lambda, SNS, FC or MNS token, or returns "".
func functionOrTopic(s string) string {
	if rest, ok := strings.CutPrefix(s, "arn:"); ok {
		// arn:<partition>:<service>:...
		parts := strings.SplitN(rest, ":", 3)
		if len(parts) >= 2 {
			switch parts[1] {
			case "lambda":
				return "a Lambda function ARN"
			case "sns":
				return "an SNS topic ARN"
			}
		}
		return ""
	}
	switch {
	case strings.HasPrefix(s, "acs:fc:"):
		return "a Function Compute function"
	case strings.HasPrefix(s, "urn:fss:"):
		return "a FunctionGraph function"
	case strings.HasPrefix(s, "acs:mns:"):
		return "an MNS queue or topic"
	}
	return ""
}

func parseWebToken(s string) (serviceToken, error) {
	tok := serviceToken{web: true}
	rest := strings.TrimPrefix(s, "web")
	if opts, ok := strings.CutPrefix(rest, "["); ok {
		end := strings.Index(opts, "]")
		if end < 0 {
			return serviceToken{}, fmt.Errorf("ServiceToken web[...] options are not closed by ']'; %s", supportedForms)
		}
		for o := range strings.SplitSeq(opts[:end], ",") {
			switch strings.TrimSpace(o) {
			case "sync":
				tok.sync = true
			case "idempotent":
				tok.idempotent = true
			default:
				return serviceToken{}, fmt.Errorf("ServiceToken web option %q is unknown; options are sync and idempotent", strings.TrimSpace(o))
			}
		}
		rest = opts[end+1:]
	}
	u, ok := strings.CutPrefix(rest, ":")
	if !ok {
		return serviceToken{}, fmt.Errorf("ServiceToken web token lacks ':' before its URL; %s", supportedForms)
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return serviceToken{}, fmt.Errorf("ServiceToken web token must name an http:// or https:// URL")
	}
	if err := checkURL(u); err != nil {
		return serviceToken{}, err
	}
	tok.url = u
	return tok, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("ServiceToken URL is not a valid absolute URL")
	}
	return nil
}

// isFunctionToken reports whether s is a Lambda function ARN, a Function Compute token or a
// FunctionGraph URN (what functionOrTopic names, but topics and queues).
func isFunctionToken(s string) bool {
	switch functionOrTopic(s) {
	case "a Lambda function ARN", "a Function Compute function", "a FunctionGraph function":
		return true
	}
	return false
}

// kind describes the token for logs without its path or query (which may hold credentials).
func (t serviceToken) kind() string {
	if t.function != "" {
		return "function " + t.function
	}
	u, err := url.Parse(t.url)
	if err != nil {
		return "url"
	}
	form := u.Scheme
	if t.web {
		var opts []string
		if t.sync {
			opts = append(opts, "sync")
		}
		if t.idempotent {
			opts = append(opts, "idempotent")
		}
		form = "web"
		if len(opts) > 0 {
			form += "[" + strings.Join(opts, ",") + "]"
		}
		form += ":" + u.Scheme
	}
	return form + "://" + u.Host
}
