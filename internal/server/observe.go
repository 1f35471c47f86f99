package server

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are the request counters and latency histograms, labelled by route pattern.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg *prometheus.Registry) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cairn_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and method (long polls included).",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 15, 30, 60},
		}, []string{"route", "method"}),
	}
	m.requests = register(reg, m.requests)
	m.duration = register(reg, m.duration)
	return m
}

// register registers c, or returns the collector already registered in its place (two
// servers on one registry share their metrics).
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	if err := reg.Register(c); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(fmt.Sprintf("server: cannot register metrics: %v", err))
	}
	return c
}

// routeOf names the route a request matched, for logs and metric labels: the ServeMux
// pattern, never the path or query (response URLs carry their signature in the query).
func routeOf(r *http.Request) string {
	if r.Pattern == "" || r.Pattern == "/" {
		return "unmatched"
	}
	return r.Pattern
}

// observe wraps h with the access log, the metrics and panic recovery.
func (s *Server) observe(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				if rec.status == 0 {
					s.fail(rec, r, fmt.Errorf("panic: %v", p)) // logs it
				} else {
					s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "route", routeOf(r), "err", fmt.Errorf("panic: %v", p))
				}
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			d := time.Since(start)
			route := routeOf(r)
			s.m.requests.WithLabelValues(route, r.Method, strconv.Itoa(status)).Inc()
			s.m.duration.WithLabelValues(route, r.Method).Observe(d.Seconds())
			s.log.InfoContext(r.Context(), "http request", "method", r.Method, "route", route,
				"status", status, "duration", d, "bytes", rec.bytes, "remote", r.RemoteAddr)
		}()
		h.ServeHTTP(rec, r)
	})
}

// recorder remembers the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
