package tflang

import (
	"bytes"
	"errors"
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

// minFastLiterals is the number of literal tokens from which a literal-only template is
// decoded by cairn instead of hclsyntax (see source.literals).
const minFastLiterals = 32

// meldCostFactor scales the bytes limit into what hclsyntax may copy while joining literal
// tokens: 16 × 64 MiB by default, about a quarter of a second.
const meldCostFactor = 16

// source is a file prepared for hclsyntax: literals maps the byte offset of each placeholder
// "(0 … )" that stands for a long literal-only template to the template's value; restore puts
// them back once parsed.
type source struct {
	src      []byte
	literals map[int]literal
}

type literal struct {
	val cty.Value
	rng hcl.Range // the template in the original source
}

// frame is one open bracket, quote, heredoc, interpolation or directive of a scan.
type frame struct {
	open  hclsyntax.Token
	ops   int  // operators met at this level since the last separator: each nests the AST once
	flush bool // a <<- heredoc
	// the template's literal tokens: how many, whether anything else is in it, its runs
	lits, parts  int
	other        bool
	first        int   // index of its first token
	runK, runB   int64 // the current run of consecutive literal tokens: tokens and bytes
	sumKB, sumK  int64 // Σ k·B/2 and Σ k over its runs
	label        bool  // a quoted block label (after an identifier or another label)
	resetOnBreak bool  // a newline ends an item here (a body or an object), not inside () or []
}

// checkSource lexes src and refuses what would hurt the parser or the evaluator: nesting (and
// operator chains) past the depth limit, calls of cairn's own __cairn_ functions, and literal
// runs whose joining would cost more than the bytes budget allows. Long literal-only templates
// are replaced by placeholders of the same length and line structure, so every position after
// them stays exact. m is charged the parser's copying.
func checkSource(src []byte, name string, start hcl.Pos, mode lexMode, m *budget.Meter, base int) (*source, hcl.Diagnostics) {
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
		return nil, hcl.Diagnostics{exceededDiag(nesting(err), rng)}
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
		if !f.other && !f.label && f.lits >= minFastLiterals && closer.Type != hclsyntax.TokenEOF {
			if s.fast(toks[f.first:i], f, closer) {
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
			top.other = true
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
			stack = append(stack, &frame{open: t})
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
			if bytes.HasPrefix(t.Bytes, []byte(reservedPrefix)) && i+1 < len(toks) && toks[i+1].Type == hclsyntax.TokenOParen {
				rng := t.Range
				return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Call to unknown function",
					Detail: fmt.Sprintf("There is no function named %q.", string(t.Bytes)), Subject: &rng}}
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

// fast decodes a literal-only template of lits tokens as hclsyntax would (escapes, a <<-
// heredoc's indentation, joined) and replaces it in s.src by "(0", spaces and its newlines, and
// ")". It declines (false) what it cannot decode exactly, which hclsyntax then parses.
func (s *source) fast(lits hclsyntax.Tokens, f *frame, closer hclsyntax.Token) bool {
	open := f.open
	strs := make([]string, len(lits))
	for i, t := range lits {
		if t.Type != hclsyntax.TokenQuotedLit && t.Type != hclsyntax.TokenStringLit {
			return false // a template hclsyntax will refuse
		}
		str, ds := hclsyntax.ParseStringLiteralToken(t)
		if ds.HasErrors() {
			return false
		}
		strs[i] = str
	}
	if f.flush && !flush(strs) {
		return false
	}
	from, to := open.Range.Start.Byte, closer.Range.End.Byte
	if to-from < 3 || to > len(s.src) || s.src[to-1] == '\n' || s.src[to-1] == '\r' {
		return false
	}
	if s.literals == nil {
		s.src = bytes.Clone(s.src)
		s.literals = map[int]literal{}
	}
	for i := from; i < to; i++ {
		if c := s.src[i]; c != '\n' && c != '\r' {
			s.src[i] = ' '
		}
	}
	s.src[from], s.src[from+1], s.src[to-1] = '(', '0', ')'
	s.literals[from] = literal{val: cty.StringVal(strings.Join(strs, "")), rng: hcl.RangeBetween(open.Range, closer.Range)}
	return true
}

// flush removes the common indentation of a <<- heredoc's lines as hclsyntax does
// (flushHeredocTemplateParts), for indentation and the character after it that are ASCII;
// false when they are not (hclsyntax counts grapheme clusters there).
func flush(strs []string) bool {
	const none = int(^uint(0) >> 1)
	minSpaces, newline := none, true
	var adjust []int
	for i, s := range strs {
		if newline {
			newline = false
			trimmed := strings.TrimLeftFunc(s, unicode.IsSpace)
			spaces := none
			if len(trimmed) > 0 || !strings.HasSuffix(s, "\n") {
				spaces = len(s) - len(trimmed)
				if !ascii(s[:min(len(s), spaces+1)]) {
					return false
				}
				adjust = append(adjust, i)
			}
			minSpaces = min(minSpaces, spaces)
		}
		newline = strings.HasSuffix(s, "\n")
	}
	for _, i := range adjust {
		strs[i] = strs[i][min(minSpaces, len(strs[i])):]
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
		if lit, ok := s.literals[p.SrcRange.Start.Byte]; ok {
			p.Expression = &hclsyntax.TemplateExpr{
				Parts:    []hclsyntax.Expression{&hclsyntax.LiteralValueExpr{Val: lit.val, SrcRange: lit.rng}},
				SrcRange: lit.rng,
			}
		}
	}
}

// jsonDepth checks a .tf.json file's nesting with one scan: brackets outside strings, and the
// templates of the strings that hold "${" or "%{", which hcljson parses when they are
// evaluated. Line and column follow the scan.
func jsonDepth(src []byte, name string, m *budget.Meter) hcl.Diagnostics {
	b := m.Budget()
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
				return hcl.Diagnostics{exceededDiag(nesting(err), hcl.Range{Filename: name, Start: p, End: p})}
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

// nesting names what reached the depth limit.
func nesting(err error) error {
	var e *budget.Exceeded
	if errors.As(err, &e) && e.What == "" {
		named := *e
		named.What = "nesting"
		return &named
	}
	return err
}
