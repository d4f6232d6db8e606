package kubemoot

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	schedulerv1 "kubemoot-scheduler/clients/go/gen/kubemoot/scheduler/v1"
)

// fakeSidecar answers from scripted responses and records the Releases it gets.
type fakeSidecar struct {
	schedulerv1.UnimplementedSchedulerServiceServer
	place    *schedulerv1.PlaceResponse
	events   []*schedulerv1.WaitEvent
	mu       sync.Mutex
	releases []*schedulerv1.ReleaseRequest
}

func (f *fakeSidecar) Place(context.Context, *schedulerv1.PlaceRequest) (*schedulerv1.PlaceResponse, error) {
	return f.place, nil
}

func (f *fakeSidecar) Wait(_ *schedulerv1.WaitRequest, s schedulerv1.SchedulerService_WaitServer) error {
	for _, ev := range f.events {
		if err := s.Send(ev); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeSidecar) Release(_ context.Context, r *schedulerv1.ReleaseRequest) (*schedulerv1.ReleaseResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases = append(f.releases, r)
	return &schedulerv1.ReleaseResponse{Released: true}, nil
}

func (f *fakeSidecar) released() []*schedulerv1.ReleaseRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*schedulerv1.ReleaseRequest(nil), f.releases...)
}

// serve runs f on an in-memory listener and returns a client Dialled through it.
func serve(t *testing.T, f *fakeSidecar) *Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	schedulerv1.RegisterSchedulerServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, "bufnet", grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) {
		return lis.Dial()
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var (
	placement = &schedulerv1.Placement{TicketId: "t-1", Provider: "gpu-a", Endpoint: "http://gpu-a:11434", Model: "qwen3:8b"}
	busy      = &schedulerv1.Refusal{Reason: schedulerv1.Refusal_REASON_GPU_BUSY, Model: "qwen3:8b", Message: "every GPU is busy"}
	tooLarge  = &schedulerv1.Refusal{Reason: schedulerv1.Refusal_REASON_MODEL_TOO_LARGE, Model: "huge", Message: "no GPU holds huge"}
)

func TestTarget(t *testing.T) {
	for in, want := range map[string]string{
		"":                       DefaultAddress,
		"  ":                     DefaultAddress,
		"127.0.0.1:7000":         "127.0.0.1:7000",
		"http://127.0.0.1:7000":  "127.0.0.1:7000",
		"http://127.0.0.1:7000/": "127.0.0.1:7000",
		"sidecar:50051":          "sidecar:50051",
	} {
		if got := Target(in); got != want {
			t.Errorf("Target(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlace(t *testing.T) {
	f := &fakeSidecar{place: &schedulerv1.PlaceResponse{Result: &schedulerv1.PlaceResponse_Placement{Placement: placement}}}
	c := serve(t, f)
	p, err := c.Place(context.Background(), &schedulerv1.PlaceRequest{})
	if err != nil || p.GetTicketId() != "t-1" || p.GetProvider() != "gpu-a" {
		t.Fatalf("Place = %v, %v", p, err)
	}

	f.place = &schedulerv1.PlaceResponse{Result: &schedulerv1.PlaceResponse_Refusal{Refusal: busy}}
	p, err = c.Place(context.Background(), &schedulerv1.PlaceRequest{})
	if p != nil || Refusal(err).GetReason() != schedulerv1.Refusal_REASON_GPU_BUSY {
		t.Fatalf("Place = %v, %v; want a gpu-busy refusal", p, err)
	}
	if !strings.Contains(err.Error(), "REASON_GPU_BUSY: every GPU is busy") {
		t.Errorf("refusal error text %q", err)
	}

	f.place = &schedulerv1.PlaceResponse{}
	if _, err = c.Place(context.Background(), &schedulerv1.PlaceRequest{}); err == nil || Refusal(err) != nil {
		t.Fatalf("an empty answer should be an error, not a refusal: %v", err)
	}
}

func TestWait(t *testing.T) {
	waiting := &schedulerv1.WaitEvent{Event: &schedulerv1.WaitEvent_Waiting{Waiting: &schedulerv1.Waiting{Refusal: busy}}}
	cases := []struct {
		name     string
		events   []*schedulerv1.WaitEvent
		waitings int
		ticket   string
		reason   schedulerv1.Refusal_Reason
		plainErr bool
	}{
		{"placed at once", []*schedulerv1.WaitEvent{{Event: &schedulerv1.WaitEvent_Placed{Placed: placement}}}, 0, "t-1", 0, false},
		{"waits, then placed", []*schedulerv1.WaitEvent{waiting, {Event: &schedulerv1.WaitEvent_Placed{Placed: placement}}}, 1, "t-1", 0, false},
		{"waits, then stands aside", []*schedulerv1.WaitEvent{waiting, {Event: &schedulerv1.WaitEvent_StandAside{StandAside: busy}}}, 1, "", schedulerv1.Refusal_REASON_GPU_BUSY, false},
		{"stands aside at once", []*schedulerv1.WaitEvent{{Event: &schedulerv1.WaitEvent_StandAside{StandAside: tooLarge}}}, 0, "", schedulerv1.Refusal_REASON_MODEL_TOO_LARGE, false},
		{"ends without a decision", []*schedulerv1.WaitEvent{waiting}, 1, "", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, &fakeSidecar{events: tc.events})
			seen := 0
			p, err := c.Wait(context.Background(), &schedulerv1.WaitRequest{}, func(w *schedulerv1.Waiting) {
				seen++
				if w.GetRefusal().GetReason() != schedulerv1.Refusal_REASON_GPU_BUSY {
					t.Errorf("waiting carries %v", w.GetRefusal())
				}
			})
			if seen != tc.waitings {
				t.Errorf("onWaiting ran %d times, want %d", seen, tc.waitings)
			}
			if p.GetTicketId() != tc.ticket {
				t.Errorf("ticket %q, want %q", p.GetTicketId(), tc.ticket)
			}
			if got := Refusal(err).GetReason(); got != tc.reason {
				t.Errorf("refusal %v, want %v (err %v)", got, tc.reason, err)
			}
			if tc.plainErr != (err != nil && Refusal(err) == nil) {
				t.Errorf("err %v: plain error wanted %t", err, tc.plainErr)
			}
		})
	}
}

func TestWithTicketReleasesWithTheOutcome(t *testing.T) {
	placed := []*schedulerv1.WaitEvent{{Event: &schedulerv1.WaitEvent_Placed{Placed: placement}}}
	req := &schedulerv1.WaitRequest{PromptChars: 1200}

	f := &fakeSidecar{events: placed}
	c := serve(t, f)
	err := c.WithTicket(context.Background(), req, func(_ context.Context, p *schedulerv1.Placement) (Usage, error) {
		if p.GetModel() != "qwen3:8b" {
			t.Errorf("fn got %v", p)
		}
		return Usage{PromptTokens: 300, OutputTokens: 20}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rel := f.released()
	if len(rel) != 1 {
		t.Fatalf("%d releases, want 1", len(rel))
	}
	r := rel[0]
	if r.GetTicketId() != "t-1" || r.GetOutcome() != schedulerv1.CallOutcome_CALL_OUTCOME_SUCCEEDED || r.GetPromptTokens() != 300 || r.GetOutputTokens() != 20 ||
		r.GetPromptChars() != 1200 || r.GetError() != "" {
		t.Errorf("release %v", r)
	}

	// A failed call is released too, as a failure with its error, and the error comes back.
	f = &fakeSidecar{events: placed}
	c = serve(t, f)
	boom := errors.New("provider answered 500")
	err = c.WithTicket(context.Background(), req, func(context.Context, *schedulerv1.Placement) (Usage, error) {
		return Usage{}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want %v", err, boom)
	}
	rel = f.released()
	if len(rel) != 1 || rel[0].GetOutcome() != schedulerv1.CallOutcome_CALL_OUTCOME_FAILED || rel[0].GetError() != boom.Error() {
		t.Errorf("releases %v", rel)
	}

	// Released even when the caller's context ended during the call.
	f = &fakeSidecar{events: placed}
	c = serve(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	err = c.WithTicket(ctx, req, func(ctx context.Context, _ *schedulerv1.Placement) (Usage, error) {
		cancel()
		return Usage{}, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || len(f.released()) != 1 {
		t.Errorf("err %v, releases %v", err, f.released())
	}

	// A static fallback placement holds no ticket: nothing to release.
	fallback := &schedulerv1.Placement{Provider: "static", Endpoint: "http://static:11434", StaticFallback: true}
	f = &fakeSidecar{events: []*schedulerv1.WaitEvent{{Event: &schedulerv1.WaitEvent_Placed{Placed: fallback}}}}
	c = serve(t, f)
	err = c.WithTicket(context.Background(), req, func(context.Context, *schedulerv1.Placement) (Usage, error) {
		return Usage{}, nil
	})
	if err != nil || len(f.released()) != 0 {
		t.Errorf("err %v, releases %v", err, f.released())
	}
}

func TestReleaseSendsTheOutcome(t *testing.T) {
	f := &fakeSidecar{}
	c := serve(t, f)
	ok, err := c.Release(context.Background(), "t-9", Outcome{
		Result: schedulerv1.CallOutcome_CALL_OUTCOME_FAILED, Latency: 1500 * time.Millisecond, PromptTokens: 7, PromptChars: 30, OutputTokens: 3,
		Err: errors.New("timeout"),
	})
	if err != nil || !ok {
		t.Fatalf("Release = %t, %v", ok, err)
	}
	r := f.released()[0]
	if r.GetTicketId() != "t-9" || r.GetOutcome() != schedulerv1.CallOutcome_CALL_OUTCOME_FAILED || r.GetLatencyMs() != 1500 || r.GetPromptTokens() != 7 ||
		r.GetPromptChars() != 30 || r.GetOutputTokens() != 3 || r.GetError() != "timeout" {
		t.Errorf("release %v", r)
	}
}
