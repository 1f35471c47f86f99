package function

import (
	"fmt"
	"strings"
)

// Forms of a function token, for messages.
const tokenForms = "arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER], " +
	"acs:fc:REGION:ACCOUNT:services/SERVICE/functions/NAME (or .../functions/NAME), " +
	"urn:fss:REGION:PROJECT:function:PACKAGE:NAME[:VERSION]"

// IsToken reports whether s has the shape of a function token (any of the three forms), so
// that a caller can tell "not a function token" from "an unknown or malformed one".
func IsToken(s string) bool {
	if rest, ok := strings.CutPrefix(s, "arn:"); ok {
		parts := strings.SplitN(rest, ":", 3)
		return len(parts) >= 2 && parts[1] == "lambda"
	}
	return strings.HasPrefix(s, "acs:fc:") || strings.HasPrefix(s, "urn:fss:")
}

// ParseName returns the function name a token names. Forms:
//
//	arn:PARTITION:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER]   (a version or alias)
//	acs:fc:REGION:ACCOUNT:services/SERVICE[.QUALIFIER]/functions/NAME
//	acs:fc:REGION:ACCOUNT:functions/NAME[:QUALIFIER]                (Function Compute 3.0)
//	urn:fss:REGION:PROJECT:function:PACKAGE:NAME[:VERSION]          (FunctionGraph)
//
// A bare name is accepted too. Region, account and qualifier are not checked: cairn has one
// copy of each function.
func ParseName(token string) (string, error) {
	name, err := parseName(token)
	if err != nil {
		return "", err
	}
	if !validName.MatchString(name) {
		return "", fmt.Errorf("function token names %q, which is not a valid function name", name)
	}
	return name, nil
}

func parseName(token string) (string, error) {
	bad := func(kind string) error {
		return fmt.Errorf("%s is malformed; forms are %s", kind, tokenForms)
	}
	switch {
	case strings.HasPrefix(token, "arn:"):
		p := strings.Split(token, ":")
		// arn, partition, lambda, region, account, function, name[, qualifier]
		if len(p) < 7 || len(p) > 8 || p[2] != "lambda" || p[5] != "function" || p[1] == "" {
			return "", bad("the Lambda ARN")
		}
		if len(p) == 8 && p[7] == "" {
			return "", bad("the Lambda ARN")
		}
		return p[6], nil
	case strings.HasPrefix(token, "acs:fc:"):
		p := strings.SplitN(token, ":", 5)
		if len(p) != 5 {
			return "", bad("the Function Compute token")
		}
		res := p[4]
		if rest, ok := strings.CutPrefix(res, "services/"); ok {
			svc, fn, ok := strings.Cut(rest, "/functions/")
			if !ok || svc == "" || strings.Contains(fn, "/") {
				return "", bad("the Function Compute token")
			}
			return fn, nil
		}
		if fn, ok := strings.CutPrefix(res, "functions/"); ok && !strings.Contains(fn, "/") {
			fn, _, _ = strings.Cut(fn, ":")
			return fn, nil
		}
		return "", bad("the Function Compute token")
	case strings.HasPrefix(token, "urn:fss:"):
		p := strings.Split(token, ":")
		// urn, fss, region, project, function, package, name[, version]
		if len(p) < 7 || len(p) > 8 || p[4] != "function" || p[5] == "" {
			return "", bad("the FunctionGraph URN")
		}
		return p[6], nil
	case strings.Contains(token, ":"):
		return "", fmt.Errorf("not a function token; forms are %s", tokenForms)
	}
	return token, nil
}
