package tflang

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
)

// Sources are checked before hclsyntax sees them, from their tokens and without recursion:
// hclsyntax recurses once per nesting level and per chained operator (50,000 nested "${"
// overflow Go's stack), and joins a template's consecutive literal tokens pairwise
// (meldConsecutiveStringLiterals), in time quadratic in their number: a heredoc has one per
// line, a quoted string one per "$" or "%".

// lexMode says what a source is: a configuration or variables file, one expression (a -var
// value), or one template (a string of a .tf.json file).
type lexMode int

const (
	lexConfig lexMode = iota
	lexExpression
	lexTemplate
)

// minFastLiterals is the number of literal tokens from which a template without directives
// is decoded by cairn instead of hclsyntax (see source.fast).
const minFastLiterals = 32

// meldCostFactor scales the bytes limit into what hclsyntax may copy while joining literal
// tokens: 16 × 64 MiB by default, about a quarter of a second.
const meldCostFactor = 16

// source is a file prepared for hclsyntax: literals maps the byte offset of each placeholder
// "(0 … )" that stands for a long template to the template cairn decoded; restore puts them
// back once parsed.
type source struct {
	src      []byte
	literals map[int]*hclsyntax.TemplateExpr
}

// frame is one open bracket, quote, heredoc, interpolation or directive of a scan.
type frame struct {
	open  hclsyntax.Token
	ops   int  // operators met at this level since the last separator: each nests the AST once
	flush bool // a <<- heredoc
	// the template's literal tokens: how many, whether a directive is in it, its runs
	lits, parts  int
	directive    bool
	interps      [][2]int // token indexes of each ${ and its }, in order
	first        int      // index of its first token
	runK, runB   int64    // the current run of consecutive literal tokens: tokens and bytes
	sumKB, sumK  int64    // Σ k·B/2 and Σ k over its runs
	label        bool     // a quoted block label (after an identifier or another label)
	resetOnBreak bool     // a newline ends an item here (a body or an object), not inside () or []
}

// checkSource lexes src and refuses what would hurt the parser or the evaluator: more tokens
// than the elements limit, nesting (and operator chains) past the depth limit, cairn's own
// __cairn_ names, and literal runs whose joining would cost more than the bytes budget allows
// (templates with directives). Long templates without directives are decoded by cairn and
// replaced by placeholders of the same length and line structure, so every position after
// them stays exact. m is charged the tokens and the parser's copying; base is the depth src
// is at (a template of a .tf.json string).
func checkSource(src []byte, name string, start hcl.Pos, mode lexMode, m *budget.Meter, base int) (*source, hcl.Diagnostics) {
	if ds := tooManyTokens(src, name, start, m); ds != nil {
		return nil, ds
	}
	var toks hclsyntax.Tokens
	switch mode {
	case lexExpression:
		toks, _ = hclsyntax.LexExpression(src, name, start)
	case lexTemplate:
		toks, _ = hclsyntax.LexTemplate(src, name, start)
	default:
		toks, _ = hclsyntax.LexConfig(src, name, start)
	}
	b := m.Budget()
	s := &source{src: src}
	stack := []*frame{{resetOnBreak: mode == lexConfig}}
	blocks, ops := 0, 0 // %{ if } and %{ for } open; operators of every open level
	over := func(err error, rng hcl.Range) (*source, hcl.Diagnostics) {
		return nil, hcl.Diagnostics{exceededDiag(budget.Named(err, "nesting"), rng)}
	}
	depth := func() int { return base + len(stack) - 1 + blocks + ops }
	pop := func() {
		if len(stack) > 1 {
			ops -= stack[len(stack)-1].ops
			stack = stack[:len(stack)-1]
		}
	}
	opn := func(f *frame) {
		f.ops++
		ops++
	}
	closeTemplate := func(f *frame, closer hclsyntax.Token, i int) error {
		f.endRun()
		if !f.directive && !f.label && f.lits >= minFastLiterals && closer.Type != hclsyntax.TokenEOF {
			if s.fast(toks, f, i) {
				return nil
			}
		}
		if cost := f.sumKB + 16*int64(f.parts)*f.sumK; cost > 0 {
			return m.Bytes(cost/meldCostFactor, fmt.Sprintf("a template of %d literal parts (hcl joins them pairwise)", f.lits))
		}
		return nil
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		top := stack[len(stack)-1]
		switch t.Type {
		case hclsyntax.TokenQuotedLit, hclsyntax.TokenStringLit:
			top.lits++
			top.parts++
			top.runK++
			top.runB += int64(len(t.Bytes))
			continue
		case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			top.directive = top.directive || t.Type == hclsyntax.TokenTemplateControl
			top.parts++
			top.endRun()
			if t.Type == hclsyntax.TokenTemplateControl && i+1 < len(toks) && toks[i+1].Type == hclsyntax.TokenIdent {
				switch string(toks[i+1].Bytes) {
				case "if", "for":
					blocks++
				case "endif", "endfor":
					blocks = max(blocks-1, 0)
				}
			}
			stack = append(stack, &frame{open: t, first: i})
		case hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			f := &frame{open: t, first: i + 1, flush: bytes.HasPrefix(t.Bytes, []byte("<<-"))}
			if i > 0 && (toks[i-1].Type == hclsyntax.TokenIdent || toks[i-1].Type == hclsyntax.TokenCQuote) {
				f.label = true
			}
			stack = append(stack, f)
		case hclsyntax.TokenOBrace:
			stack = append(stack, &frame{open: t, resetOnBreak: true})
		case hclsyntax.TokenOBrack:
			opn(top) // an index or splat after an expression nests it
			stack = append(stack, &frame{open: t})
		case hclsyntax.TokenOParen:
			stack = append(stack, &frame{open: t})
		case hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			if len(stack) > 1 {
				if err := closeTemplate(top, t, i); err != nil {
					return over(err, top.open.Range)
				}
				pop()
			}
			continue
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd:
			if t.Type == hclsyntax.TokenTemplateSeqEnd && top.open.Type == hclsyntax.TokenTemplateInterp && len(stack) > 1 {
				parent := stack[len(stack)-2]
				parent.interps = append(parent.interps, [2]int{top.first, i})
			}
			pop()
			continue
		case hclsyntax.TokenComma, hclsyntax.TokenEqual:
			ops, top.ops = ops-top.ops, 0
			continue
		case hclsyntax.TokenNewline:
			if top.resetOnBreak {
				ops, top.ops = ops-top.ops, 0
			}
			continue
		case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar, hclsyntax.TokenSlash, hclsyntax.TokenPercent,
			hclsyntax.TokenAnd, hclsyntax.TokenOr, hclsyntax.TokenBang, hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual,
			hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq,
			hclsyntax.TokenQuestion:
			opn(top)
		case hclsyntax.TokenIdent:
			if bytes.HasPrefix(t.Bytes, []byte(reservedPrefix)) {
				rng := t.Range
				if i+1 < len(toks) && toks[i+1].Type == hclsyntax.TokenOParen {
					return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Call to unknown function",
						Detail: fmt.Sprintf("There is no function named %q.", string(t.Bytes)), Subject: &rng}}
				}
				return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reserved name",
					Detail: fmt.Sprintf("Names beginning with %q are reserved for cairn.", reservedPrefix), Subject: &rng}}
			}
			continue
		case hclsyntax.TokenEOF:
			for _, f := range stack { // unterminated templates are joined all the same
				if err := closeTemplate(f, t, i); err != nil {
					rng := f.open.Range
					if f.open.Type == hclsyntax.TokenNil {
						rng = t.Range
					}
					return over(err, rng)
				}
			}
			continue
		default:
			continue
		}
		if err := b.Depth(depth()); err != nil {
			return over(err, t.Range)
		}
	}
	return s, nil
}

func (f *frame) endRun() {
	if f.runK > 1 {
		f.sumKB += f.runK * f.runB / 2
		f.sumK += f.runK
	}
	f.runK, f.runB = 0, 0
}

// fast decodes a template without directives, of many literal tokens, as hclsyntax would:
// its literals (escapes, "~" strips, a <<- heredoc's indentation, joined) by cairn, its
// interpolations by hclsyntax.ParseExpression each; then replaces it in s.src by "(0", spaces
// and its newlines, and ")". It declines (false) what it cannot decode exactly, which hclsyntax
// then parses. end is the index of the closing token in toks.
func (s *source) fast(toks hclsyntax.Tokens, f *frame, end int) bool {
	open, closer := f.open, toks[end]
	type part struct {
		lit  bool
		val  string
		rng  hcl.Range
		expr hclsyntax.Expression
	}
	var parts []part
	ltrim, next := false, 0
	for i := f.first; i < end; i++ {
		t := toks[i]
		if next < len(f.interps) && f.interps[next][0] == i {
			j := f.interps[next][1]
			if j >= end || t.Type != hclsyntax.TokenTemplateInterp || toks[j].Type != hclsyntax.TokenTemplateSeqEnd {
				return false
			}
			seq := toks[j]
			i, next = j, next+1
			if len(t.Bytes) == 3 && len(parts) > 0 && parts[len(parts)-1].lit { // "${~" after a literal
				parts[len(parts)-1].val = strings.TrimRightFunc(parts[len(parts)-1].val, unicode.IsSpace)
			}
			from, to := t.Range.End.Byte, seq.Range.Start.Byte
			if from > to || to > len(s.src) {
				return false
			}
			x, ds := hclsyntax.ParseExpression(s.src[from:to], t.Range.Filename, t.Range.End)
			if ds.HasErrors() {
				return false
			}
			rewrite(x, s)
			parts = append(parts, part{expr: metered(bytesFunc, x)})
			ltrim = len(seq.Bytes) == 2 // "~}"
			continue
		}
		if t.Type != hclsyntax.TokenQuotedLit && t.Type != hclsyntax.TokenStringLit {
			return false // a template hclsyntax will refuse
		}
		str, ds := hclsyntax.ParseStringLiteralToken(t)
		if ds.HasErrors() {
			return false
		}
		if ltrim {
			str = strings.TrimLeftFunc(str, unicode.IsSpace)
		}
		ltrim = false
		parts = append(parts, part{lit: true, val: str, rng: t.Range})
	}
	if next != len(f.interps) {
		return false
	}
	if f.flush {
		strs := make([]*string, len(parts)) // nil: an interpolation
		for i := range parts {
			if parts[i].lit {
				strs[i] = &parts[i].val
			}
		}
		if !flush(strs) {
			return false
		}
	}
	from, to := open.Range.Start.Byte, closer.Range.End.Byte
	if to-from < 3 || to > len(s.src) || s.src[to-1] == '\n' || s.src[to-1] == '\r' {
		return false
	}
	rng := hcl.RangeBetween(open.Range, closer.Range)
	var exprs []hclsyntax.Expression
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if !p.lit {
			exprs = append(exprs, p.expr)
			continue
		}
		var b strings.Builder // hclsyntax joins consecutive literals (meldConsecutiveStringLiterals)
		r := p.rng
		for ; i < len(parts) && parts[i].lit; i++ {
			b.WriteString(parts[i].val)
			r.End = parts[i].rng.End
		}
		i--
		exprs = append(exprs, &hclsyntax.LiteralValueExpr{Val: cty.StringVal(b.String()), SrcRange: r})
	}
	if s.literals == nil {
		s.src = bytes.Clone(s.src)
		s.literals = map[int]*hclsyntax.TemplateExpr{}
	}
	for i := from; i < to; i++ {
		if c := s.src[i]; c != '\n' && !(c == '\r' && i+1 < to && s.src[i+1] == '\n') {
			s.src[i] = ' '
		}
	}
	s.src[from], s.src[from+1], s.src[to-1] = '(', '0', ')'
	s.literals[from] = &hclsyntax.TemplateExpr{Parts: exprs, SrcRange: rng}
	return true
}

// flush removes the common indentation of a <<- heredoc's lines as hclsyntax does
// (flushHeredocTemplateParts): strs are its parts, nil for an interpolation, which counts as
// no indentation where it starts a line. Only for indentation, and the character after it,
// in ASCII (false otherwise: hclsyntax counts grapheme clusters there).
func flush(strs []*string) bool {
	const none = int(^uint(0) >> 1)
	minSpaces, newline := none, true
	var adjust []*string
	for _, p := range strs {
		if newline {
			newline = false
			spaces := 0
			if p != nil {
				s := *p
				trimmed := strings.TrimLeftFunc(s, unicode.IsSpace)
				spaces = none
				if len(trimmed) > 0 || !strings.HasSuffix(s, "\n") {
					spaces = len(s) - len(trimmed)
					if !ascii(s[:min(len(s), spaces+1)]) {
						return false
					}
					adjust = append(adjust, p)
				}
			}
			minSpaces = min(minSpaces, spaces)
		}
		if p != nil && strings.HasSuffix(*p, "\n") {
			newline = true
		}
	}
	for _, p := range adjust {
		*p = (*p)[min(minSpaces, len(*p)):]
	}
	return true
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// restore puts the literal templates of s back into the parsed AST of s.
func (s *source) restore(parens []*hclsyntax.ParenthesesExpr) {
	for _, p := range parens {
		if t, ok := s.literals[p.SrcRange.Start.Byte]; ok {
			p.Expression = t
		}
	}
}

// tooManyTokens charges m the tokens of src, counted from its bytes before any lexer runs,
// and refuses the source past the elements limit: hcl's lexers and parsers keep a few hundred
// bytes per token (a 2 MB file of "1," takes 740 MB to parse), so a request body of
// punctuation must not reach them. The count is an upper bound: every punctuation byte and
// newline is one, so is every run of letters, digits and other characters.
func tooManyTokens(src []byte, name string, start hcl.Pos, m *budget.Meter) hcl.Diagnostics {
	max, _ := m.Left()
	lim := m.Budget().Limits().Elements
	if lim < 0 {
		return nil
	}
	var n int64
	pos, word := start, false
	for i, c := range src {
		switch {
		case c >= 0x80 && c < 0xC0: // a UTF-8 continuation byte
			continue
		case c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			if !word {
				n++
			}
			word = true
		case c == ' ' || c == '\t' || c == '\r':
			word = false
		default:
			n, word = n+1, false
		}
		if n > max {
			p := hcl.Pos{Line: pos.Line, Column: pos.Column, Byte: i}
			return hcl.Diagnostics{exceededDiag(&budget.Exceeded{Limit: "elements", Max: lim,
				What: "the configuration's tokens (its parser keeps each)"}, hcl.Range{Filename: name, Start: p, End: p})}
		}
		if c == '\n' {
			pos.Line, pos.Column = pos.Line+1, 1
		} else {
			pos.Column++
		}
	}
	_ = m.Elements(n, "") // within what was left
	return nil
}

// jsonDepth checks a .tf.json file's nesting with one scan: brackets outside strings, and the
// templates of the strings that hold "${" or "%{", which hcljson parses when they are
// evaluated. Line and column follow the scan.
func jsonDepth(src []byte, name string, m *budget.Meter) hcl.Diagnostics {
	b := m.Budget()
	if ds := tooManyTokens(src, name, hcl.InitialPos, m); ds != nil {
		return ds
	}
	depth := 0
	pos := hcl.Pos{Line: 1, Column: 1}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '\n':
			pos.Line, pos.Column = pos.Line+1, 0
		case '[', '{':
			depth++
			if err := b.Depth(depth); err != nil {
				p := hcl.Pos{Line: pos.Line, Column: pos.Column, Byte: i}
				return hcl.Diagnostics{exceededDiag(budget.Named(err, "nesting"), hcl.Range{Filename: name, Start: p, End: p})}
			}
		case ']', '}':
			depth--
		case '"':
			end := stringEnd(src, i)
			if bytes.Contains(src[i:end], []byte("${")) || bytes.Contains(src[i:end], []byte("%{")) {
				start := hcl.Pos{Line: pos.Line, Column: pos.Column + 1, Byte: i + 1}
				if ds := jsonTemplate(src[i:end], name, start, depth, m); ds.HasErrors() {
					return ds
				}
			}
			pos.Column += utf8.RuneCount(src[i+1 : end])
			i = end - 1
		}
		pos.Column++
	}
	return nil
}

// stringEnd is the index after the JSON string starting at src[i] (its closing quote
// included), or len(src).
func stringEnd(src []byte, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(src)
}

// jsonTemplate checks one JSON string as the template hcljson will parse, depth levels down.
func jsonTemplate(lit []byte, name string, start hcl.Pos, depth int, m *budget.Meter) hcl.Diagnostics {
	str, err := unquoteJSON(lit)
	if err != nil {
		return nil // not a JSON string: hcljson reports it
	}
	_, ds := checkSource([]byte(str), name, start, lexTemplate, m, depth)
	return ds
}
