// Command workload is the application Pod of the end-to-end tests: it
// answers, over plain HTTP on :8080, what the Pod sees from inside, so a
// test on the host can ask it.
//
//	GET /env?name=N     the environment variable N
//	GET /file?path=P    the file P
//	GET /fetch?url=U    the status of an HTTPS GET of U sent with the Pod's
//	                    ServiceAccount token (the server's certificate is
//	                    not checked: what is tested is who may call)
package main

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

const tokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

func main() {
	http.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
		v, ok := os.LookupEnv(r.URL.Query().Get("name"))
		if !ok {
			http.Error(w, "not set", http.StatusNotFound)
			return
		}
		fmt.Fprint(w, v)
	})
	http.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(r.URL.Query().Get("path"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Write(b)
	})
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	http.HandleFunc("/fetch", func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, r.URL.Query().Get("url"), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if token, err := os.ReadFile(tokenFile); err == nil {
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		}
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		fmt.Fprint(w, resp.StatusCode)
	})
	server := &http.Server{Addr: ":8080", ReadHeaderTimeout: 5 * time.Second}
	if err := server.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
