// Package kubemoot is a Go client of the Kubemoot Scheduler sidecar: the generated
// SchedulerService stub over gRPC, with typed helpers for the common path of one inference
// call: place it (waiting while every GPU is busy), run it, release the ticket.
package kubemoot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"

	schedulerv1 "kubemoot-scheduler/clients/go/gen/kubemoot/scheduler/v1"
)

// DefaultAddress is where a sidecar listens unless configured otherwise.
const DefaultAddress = "127.0.0.1:50051"

// releaseTimeout bounds a Release sent after the caller's context ended: the ticket's room
// must come back even when the call was cancelled.
const releaseTimeout = 10 * time.Second

// Client talks to one sidecar.
type Client struct {
	conn *grpc.ClientConn // nil when built by New over a connection the caller owns
	api  schedulerv1.SchedulerServiceClient
}

// Dial connects to the sidecar at address ("host:port"; an "http://" prefix is accepted so
// that the base URLs of the other clients work too; empty means DefaultAddress). The sidecar
// speaks plaintext gRPC on loopback; opts are added after the default options.
func Dial(ctx context.Context, address string, opts ...grpc.DialOption) (*Client, error) {
	target := Target(address)
	all := append([]grpc.DialOption{grpc.WithInsecure()}, opts...)
	conn, err := grpc.DialContext(ctx, target, all...)
	if err != nil {
		return nil, fmt.Errorf("dial sidecar at %s: %w", target, err)
	}
	return &Client{conn: conn, api: schedulerv1.NewSchedulerServiceClient(conn)}, nil
}

// New wraps a connection the caller made (and closes).
func New(conn grpc.ClientConnInterface) *Client {
	return &Client{api: schedulerv1.NewSchedulerServiceClient(conn)}
}

// Target turns an address or base URL into a gRPC dial target.
func Target(address string) string {
	a := strings.TrimSpace(address)
	a = strings.TrimPrefix(a, "http://")
	a = strings.TrimSuffix(a, "/")
	if a == "" {
		return DefaultAddress
	}
	return a
}

// Close closes the connection Dial made.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// API is the generated stub, for the RPCs without a helper here (Renew, Commit, EndThread,
// Attribute).
func (c *Client) API() schedulerv1.SchedulerServiceClient { return c.api }

// RefusedError is a decision not to place the call (from Place, or Wait's stand_aside).
type RefusedError struct {
	Refusal *schedulerv1.Refusal
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: %s", e.Refusal.GetReason(), e.Refusal.GetMessage())
}

// Refusal returns the refusal inside err, or nil when err is not a refusal.
func Refusal(err error) *schedulerv1.Refusal {
	var r *RefusedError
	if errors.As(err, &r) {
		return r.Refusal
	}
	return nil
}

// Place makes one placement attempt; it never blocks on capacity. A refusal comes back as
// a *RefusedError (REASON_GPU_BUSY means Wait could help).
func (c *Client) Place(ctx context.Context, req *schedulerv1.PlaceRequest) (*schedulerv1.Placement, error) {
	res, err := c.api.Place(ctx, req)
	if err != nil {
		return nil, err
	}
	if p := res.GetPlacement(); p != nil {
		return p, nil
	}
	if r := res.GetRefusal(); r != nil {
		return nil, &RefusedError{Refusal: r}
	}
	return nil, errors.New("Place answered with neither a placement nor a refusal")
}

// Wait places the call, waiting for capacity while every acceptable GPU is busy. onWaiting,
// when not nil, sees the one `waiting` event sent before the sidecar first blocks. A
// stand_aside ends the wait as a *RefusedError. Cancelling ctx abandons the wait and claims
// nothing.
func (c *Client) Wait(
	ctx context.Context,
	req *schedulerv1.WaitRequest,
	onWaiting func(*schedulerv1.Waiting),
) (*schedulerv1.Placement, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.api.Wait(ctx, req)
	if err != nil {
		return nil, err
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			// EOF before a decision breaks the stream's contract; anything else is the RPC's error.
			if errors.Is(err, io.EOF) {
				return nil, errors.New("the Wait stream ended without a decision")
			}
			return nil, err
		}
		switch e := ev.GetEvent().(type) {
		case *schedulerv1.WaitEvent_Waiting:
			if onWaiting != nil {
				onWaiting(e.Waiting)
			}
		case *schedulerv1.WaitEvent_Placed:
			return e.Placed, nil
		case *schedulerv1.WaitEvent_StandAside:
			return nil, &RefusedError{Refusal: e.StandAside}
		}
	}
}

// Outcome is how a call went, reported at Release. It feeds the provider's circuit breaker
// (Result), its latency estimate (Latency) and the chars-per-token ratio (the token counts).
// The zero Result (CALL_OUTCOME_UNSPECIFIED) is neutral: it never counts as a failure.
type Outcome struct {
	Result       schedulerv1.CallOutcome
	Latency      time.Duration
	PromptTokens int64
	PromptChars  int64
	OutputTokens int64
	Err          error
}

// Release ends a ticket with the call's outcome. It reports false when the ticket was
// unknown or already released (Release is idempotent). A placement without a ticket (a
// static fallback) has nothing to release.
func (c *Client) Release(ctx context.Context, ticketID string, o Outcome) (bool, error) {
	if ticketID == "" {
		return false, nil
	}
	req := &schedulerv1.ReleaseRequest{
		TicketId:     ticketID,
		Outcome:      o.Result,
		LatencyMs:    o.Latency.Milliseconds(),
		PromptTokens: o.PromptTokens,
		PromptChars:  o.PromptChars,
		OutputTokens: o.OutputTokens,
	}
	if o.Err != nil {
		req.Error = o.Err.Error()
	}
	res, err := c.api.Release(ctx, req)
	if err != nil {
		return false, err
	}
	return res.GetReleased(), nil
}

// ResultOf is CALL_OUTCOME_SUCCEEDED for a nil error, CALL_OUTCOME_FAILED otherwise.
func ResultOf(err error) schedulerv1.CallOutcome {
	if err != nil {
		return schedulerv1.CallOutcome_CALL_OUTCOME_FAILED
	}
	return schedulerv1.CallOutcome_CALL_OUTCOME_SUCCEEDED
}

// Usage is what a call reports about itself for Release; zero fields mean unknown.
type Usage struct {
	PromptTokens int64
	PromptChars  int64
	OutputTokens int64
}

// WithTicket wraps one inference call: Wait for a placement, run fn on it, and Release the
// ticket with the outcome, also when fn fails or ctx is cancelled meanwhile. fn's error is
// returned; a failed Release after a successful call is returned instead.
func (c *Client) WithTicket(
	ctx context.Context,
	req *schedulerv1.WaitRequest,
	fn func(context.Context, *schedulerv1.Placement) (Usage, error),
) error {
	p, err := c.Wait(ctx, req, nil)
	if err != nil {
		return err
	}
	started := time.Now()
	usage, callErr := fn(ctx, p)
	if usage.PromptChars == 0 {
		usage.PromptChars = req.GetPromptChars()
	}
	// A fresh context: ctx may be what ended the call, and the room must come back anyway.
	rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_, relErr := c.Release(rctx, p.GetTicketId(), Outcome{
		Result:       ResultOf(callErr),
		Latency:      time.Since(started),
		PromptTokens: usage.PromptTokens,
		PromptChars:  usage.PromptChars,
		OutputTokens: usage.OutputTokens,
		Err:          callErr,
	})
	if callErr != nil {
		return callErr
	}
	if relErr != nil {
		return fmt.Errorf("release ticket %s: %w", p.GetTicketId(), relErr)
	}
	return nil
}
