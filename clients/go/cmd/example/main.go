// Example: ask the sidecar where a call should run (waiting while every GPU is busy), run it
// on Ollama's /api/chat there, and release the ticket with the outcome.
//
//	example [-addr 127.0.0.1:50051] [-agent default/example] [-model qwen3:14b,qwen3:8b]
//
// -model lists the acceptable models, preferred first; each next one scores a point lower,
// so all stay within the default tolerance (10 points) of the preferred one.
//
// Exit codes: 0 placed, ran and released; 2 refused (the reason is printed); 1 any other error.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	schedulerv1 "kubemoot-scheduler/clients/go/gen/kubemoot/scheduler/v1"
	"kubemoot-scheduler/clients/go/kubemoot"
)

const question = "In one sentence: why schedule inference calls per GPU?"

func main() {
	addr := flag.String("addr", kubemoot.DefaultAddress, "the sidecar's API address (host:port)")
	agent := flag.String("agent", "default/example", "the calling agent as namespace/name")
	models := flag.String("model", "qwen3:8b", "the acceptable models, comma-separated, preferred first")
	limit := flag.Int64("wait-limit", 60, "the longest to wait for capacity, in seconds")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := kubemoot.Dial(ctx, *addr)
	if err != nil {
		fail(err)
	}
	defer client.Close()

	req := &schedulerv1.WaitRequest{
		Agent:        *agent,
		Candidates:   candidates(*models),
		PromptChars:  int64(len(question)),
		LimitSeconds: *limit,
	}
	p, err := client.Wait(ctx, req, func(w *schedulerv1.Waiting) {
		fmt.Printf("waiting: %s\n", w.GetRefusal().GetMessage())
	})
	if r := kubemoot.Refusal(err); r != nil {
		fmt.Printf("refused: %s model %s: %s\n", r.GetReason(), r.GetModel(), r.GetMessage())
		os.Exit(2)
	}
	if err != nil {
		fail(err)
	}
	warmth := "warm"
	if p.GetColdLoad() {
		warmth = "cold"
	}
	fmt.Printf("placed on %s (%s) model %s %s ticket %s\n",
		p.GetProvider(), p.GetEndpoint(), p.GetModel(), warmth, p.GetTicketId())

	started := time.Now()
	answer, usage, callErr := chat(ctx, p)
	outcome := kubemoot.Outcome{
		Result:       kubemoot.ResultOf(callErr),
		Latency:      time.Since(started),
		PromptTokens: usage.PromptTokens,
		PromptChars:  int64(len(question)),
		OutputTokens: usage.OutputTokens,
		Err:          callErr,
	}
	if callErr == nil {
		fmt.Printf("answer: %s\n", answer)
	}
	// Release whatever happened: the ticket holds the GPU's room until then.
	released, err := client.Release(context.Background(), p.GetTicketId(), outcome)
	if err != nil {
		fail(fmt.Errorf("release: %w", err))
	}
	fmt.Printf("released: %t\n", released)
	if callErr != nil {
		fail(callErr)
	}
}

// candidates turns "a,b,c" into candidates scored 100, 99, 98.
func candidates(list string) []*schedulerv1.Candidate {
	var out []*schedulerv1.Candidate
	for _, m := range strings.Split(list, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, &schedulerv1.Candidate{Model: m, Score: int32(100 - len(out))})
		}
	}
	return out
}

// chat sends the question to Ollama's /api/chat at the placement, with the placed model.
func chat(ctx context.Context, p *schedulerv1.Placement) (string, kubemoot.Usage, error) {
	body := map[string]interface{}{
		"model":    p.GetModel(),
		"messages": []map[string]string{{"role": "user", "content": question}},
		"stream":   false,
	}
	if n := p.GetContextLength(); n > 0 {
		body["options"] = map[string]int64{"num_ctx": n}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return "", kubemoot.Usage{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.GetEndpoint()+"/api/chat", bytes.NewReader(data))
	if err != nil {
		return "", kubemoot.Usage{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", kubemoot.Usage{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", kubemoot.Usage{}, fmt.Errorf("provider answered %s", res.Status)
	}
	var out struct {
		Message         struct{ Content string } `json:"message"`
		PromptEvalCount int64                    `json:"prompt_eval_count"`
		EvalCount       int64                    `json:"eval_count"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return "", kubemoot.Usage{}, fmt.Errorf("provider's answer: %w", err)
	}
	return out.Message.Content, kubemoot.Usage{PromptTokens: out.PromptEvalCount, OutputTokens: out.EvalCount}, nil
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "example: %v\n", err)
	os.Exit(1)
}
