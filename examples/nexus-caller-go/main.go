// A caller in another namespace, in Go (docs/nexus.md): workflows of another team that fund a
// card and issue one through the card-issuing Nexus service `cardIssuing`, with no access to its
// namespace and no payload key of its. test/nexus/callers.test.ts builds this program and runs it
// as the caller's worker on the dev server; README "Calling from another namespace" shows it.
//
//	nexus-caller -address 127.0.0.1:7233 -namespace caller -task-queue caller
package main

import (
	"errors"
	"flag"
	"log"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// The service and its operations, as src/client/nexus-contract.ts names them.
const (
	service          = "cardIssuing"
	fundCardOp       = "fundCard"
	issueCardOp      = "issueCard"
	operationTimeout = 10 * time.Minute
)

// MoneyMovementRequest is fundCard's input: cents, and the key a retry repeats.
type MoneyMovementRequest struct {
	CardID         string `json:"cardId"`
	Amount         int64  `json:"amount"`
	IdempotencyKey string `json:"idempotencyKey"`
}

// IssueCardRequest is issueCard's input (the fields this example sends).
type IssueCardRequest struct {
	CardBinID      string `json:"cardBinId"`
	InitialAmount  int64  `json:"initialAmount"`
	FirstName      string `json:"firstName"`
	LastName       string `json:"lastName"`
	IdempotencyKey string `json:"idempotencyKey"`
}

// Outcome is what the caller's workflow makes of an operation: its result, or our failure's type.
type Outcome struct {
	OK                 bool           `json:"ok"`
	Result             map[string]any `json:"result,omitempty"`
	Type               string         `json:"type,omitempty"`
	Message            string         `json:"message,omitempty"`
	MayHaveTakenEffect bool           `json:"mayHaveTakenEffect"`
}

// failureDetail is the first detail of our failures: whether money may have moved, and where.
type failureDetail struct {
	MayHaveTakenEffect bool   `json:"mayHaveTakenEffect"`
	WorkflowID         string `json:"workflowId"`
	IdempotencyKey     string `json:"idempotencyKey"`
}

// --- the README's snippet: begin

// FundCardThroughNexus funds a card through the endpoint; a repeat under the same key moves money once.
func FundCardThroughNexus(ctx workflow.Context, endpoint string, request MoneyMovementRequest) (Outcome, error) {
	return callCardIssuing(ctx, endpoint, fundCardOp, request)
}

// callCardIssuing runs one operation of the service and reads its result or its typed failure.
func callCardIssuing(ctx workflow.Context, endpoint, operation string, request any) (Outcome, error) {
	cardIssuing := workflow.NewNexusClient(endpoint, service)
	future := cardIssuing.ExecuteOperation(ctx, operation, request, workflow.NexusOperationOptions{ScheduleToCloseTimeout: operationTimeout})
	var result map[string]any
	if err := future.Get(ctx, &result); err != nil {
		return typedFailure(err)
	}
	return Outcome{OK: true, Result: result}, nil
}

// typedFailure reads our failure from the operation's error chain: its innermost
// ApplicationError has the type, and whether money may have moved in its first detail.
func typedFailure(err error) (Outcome, error) {
	var opErr *temporal.NexusOperationError
	if !errors.As(err, &opErr) {
		return Outcome{}, err
	}
	var ours *temporal.ApplicationError
	for cause := error(opErr); cause != nil; cause = errors.Unwrap(cause) {
		if appErr, ok := cause.(*temporal.ApplicationError); ok {
			ours = appErr
		}
	}
	if ours == nil {
		return Outcome{}, err
	}
	var detail failureDetail
	_ = ours.Details(&detail)
	return Outcome{OK: false, Type: ours.Type(), Message: ours.Message(), MayHaveTakenEffect: detail.MayHaveTakenEffect}, nil
}

// --- the README's snippet: end

// IssueCardThroughNexus issues a card through the endpoint (it runs until the card is created).
func IssueCardThroughNexus(ctx workflow.Context, endpoint string, request IssueCardRequest) (Outcome, error) {
	return callCardIssuing(ctx, endpoint, issueCardOp, request)
}

func main() {
	address := flag.String("address", "127.0.0.1:7233", "the Temporal frontend")
	namespace := flag.String("namespace", "default", "the caller's namespace")
	taskQueue := flag.String("task-queue", "nexus-caller-go", "the caller's task queue")
	flag.Parse()

	c, err := client.Dial(client.Options{HostPort: *address, Namespace: *namespace})
	if err != nil {
		log.Fatalf("connecting to %s: %v", *address, err)
	}
	defer c.Close()
	w := worker.New(c, *taskQueue, worker.Options{})
	w.RegisterWorkflow(FundCardThroughNexus)
	w.RegisterWorkflow(IssueCardThroughNexus)
	log.Printf("caller worker polling %s in namespace %s", *taskQueue, *namespace)
	if err := w.Run(worker.InterruptCh()); err != nil {
		log.Fatalf("worker: %v", err)
	}
}
