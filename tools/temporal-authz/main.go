// Command temporal-authz is Temporal's own server (go.temporal.io/server, the version the Temporal
// CLI v1.5.1 embeds) with one change: an Authorizer that gives each process of card-issuing only the calls
// it makes. Temporal's default authorizer knows four namespace roles (read, write, worker, admin), and
// a writer may start any workflow and poll any queue; it cannot say "the webhook bridge may only
// signal entity workflows". Everything else is the stock server: the config file is Temporal's own
// (persistence, TLS, membership, `global.authorization`), read as `temporal-server start` reads it.
//
// Tokens are JWTs checked by Temporal's default JWT claim mapper with the keys of
// `global.authorization.jwtKeyProvider.keySourceURIs` (JWKS over http(s), or file:// here), ES256 or
// RS256. Their `permissions` claim (`global.authorization.permissionsClaimName`) lists
// `<namespace>:<role>` entries, the role one of:
//
//	bridge    signal (and signal-with-start) the entity workflows, query them: the webhook bridge
//	worker    poll and answer workflow, activity and Nexus tasks, plus what activities and a
//	          worker's start do through their client (start, signal, query, update, list, history,
//	          schedules, queue rate limits, worker deployment versions)
//	service   a service with the typed client: start, signal, update, query, describe, list, read a
//	          flow's result, cancel, schedules; no poll, no terminate
//	operator  the operator CLI: what a service does, plus terminate, reset, delete, batch
//	          operations, worker deployments, activity operations, search attributes (read)
//	admin     everything within its namespace (namespace settings, search attributes)
//
// `temporal-system:admin` is everything, cluster-wide APIs too (Nexus endpoints, namespaces, the
// admin service); the internal frontend (the server's own system workers) acts as it. No token, an
// invalid one, or a role not listed here: denied. Health checks and GetSystemInfo are open, as with
// Temporal's default authorizer. Each denial is logged (warn) with the caller's subject.
//
//	temporal-authz --config-dir DIR --env ENV [--zone ZONE]
//
// tools/temporal-authz.ts builds it (once per machine) and starts it for test/deploy/temporal-authz.test.ts.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.temporal.io/server/temporal"
)

// What the bridge may touch: the entity workflows (src/workflows/card-lifecycle.ts,
// provider-entity.ts) on an entity queue (src/shared/entity-queues.ts), under their IDs
// (src/shared/ids.ts), through one signal and one query (src/shared/messages.ts). The bridge reaches
// them through src/temporal/entity-signals.ts and src/bridge/late.ts; the test drives those.
const (
	entityQueueSuffix = "-entities"
	providerSignal    = "providerEvent"
	entityQuery       = "entityEvent"
)

// The ID prefix of each entity workflow type: `card/…` is a cardLifecycle, the others providerEntity.
var entityTypes = map[string][]string{
	"cardLifecycle":  {"card/"},
	"providerEntity": {"kyc-cardholder/", "esim-order/", "esim/", "payout/", "unrouted-events/"},
}

// Calls each role may make (WorkflowService, OperatorService and NexusService method names), beyond
// the health checks. The bridge's are checked further in bridgeMay.
var (
	bridgeCalls = set("SignalWorkflowExecution", "SignalWithStartWorkflowExecution", "QueryWorkflow", "DescribeNamespace")

	// Reading flows, as a service's typed client does (result() reads the history's close event).
	readCalls = set("DescribeNamespace", "DescribeWorkflowExecution", "QueryWorkflow", "ListWorkflowExecutions",
		"CountWorkflowExecutions", "GetWorkflowExecutionHistory", "PollWorkflowExecutionUpdate",
		"DescribeSchedule", "ListSchedules")
	// Acting on flows: starting, messaging, cancelling; creating and changing schedules.
	actCalls = set("StartWorkflowExecution", "SignalWorkflowExecution", "SignalWithStartWorkflowExecution",
		"ExecuteMultiOperation", "UpdateWorkflowExecution", "RequestCancelWorkflowExecution",
		"CreateSchedule", "UpdateSchedule", "PatchSchedule")

	workerCalls = union(readCalls, actCalls, set(
		// polling and answering tasks
		"PollWorkflowTaskQueue", "RespondWorkflowTaskCompleted", "RespondWorkflowTaskFailed", "RespondQueryTaskCompleted",
		"PollActivityTaskQueue", "RecordActivityTaskHeartbeat", "RecordActivityTaskHeartbeatById",
		"RespondActivityTaskCompleted", "RespondActivityTaskCompletedById", "RespondActivityTaskFailed",
		"RespondActivityTaskFailedById", "RespondActivityTaskCanceled", "RespondActivityTaskCanceledById",
		"PollNexusTaskQueue", "RespondNexusTaskCompleted", "RespondNexusTaskFailed",
		"ResetStickyTaskQueue", "ShutdownWorker", "RecordWorkerHeartbeat", "FetchWorkerConfig",
		"DescribeTaskQueue", "GetWorkerBuildIdCompatibility", "GetWorkerVersioningRules",
		// at start (src/fleet/workers.ts): search attributes present, queue rate limits, the release gate's history reads
		"ListSearchAttributes", "UpdateTaskQueueConfig", "GetWorkflowExecutionHistoryReverse",
		// versioned workers record and promote their build (src/temporal/deployments.ts)
		"DescribeWorkerDeployment", "DescribeWorkerDeploymentVersion", "ListWorkerDeployments",
		"SetWorkerDeploymentCurrentVersion", "SetWorkerDeploymentRampingVersion", "UpdateWorkerDeploymentVersionMetadata"))

	serviceCalls = union(readCalls, actCalls)

	operatorCalls = union(serviceCalls, set(
		"TerminateWorkflowExecution", "ResetWorkflowExecution", "DeleteWorkflowExecution",
		"GetWorkflowExecutionHistoryReverse", "DeleteSchedule", "ListScheduleMatchingTimes",
		"DescribeTaskQueue", "ListSearchAttributes", "ListWorkers", "DescribeWorker",
		"StartBatchOperation", "StopBatchOperation", "DescribeBatchOperation", "ListBatchOperations",
		"UpdateWorkflowExecutionOptions", "UpdateActivityOptions", "PauseActivity", "UnpauseActivity", "ResetActivity",
		"DescribeWorkerDeployment", "DescribeWorkerDeploymentVersion", "ListWorkerDeployments",
		"SetWorkerDeploymentCurrentVersion", "SetWorkerDeploymentRampingVersion", "UpdateWorkerDeploymentVersionMetadata",
		"SetWorkerDeploymentManager", "DeleteWorkerDeploymentVersion", "DeleteWorkerDeployment"))
)

// processRoles is what the claim mapper adds to Temporal's claims (Claims.Extensions): the roles
// of the token's permissions, by namespace.
type processRoles map[string][]string

// roleMapper is Temporal's default JWT claim mapper (signature, expiry, audience, `sub`, the
// standard roles), followed by a read of the same, now verified, token's permissions for our roles.
type roleMapper struct {
	jwt       authorization.ClaimMapper
	claimName string
}

func (m *roleMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	claims, err := m.jwt.GetClaims(info)
	if err != nil || claims == nil || info.AuthToken == "" {
		return claims, err
	}
	// The default mapper accepted "Bearer <token>" and verified <token>: its payload is the issuer's.
	_, token, _ := strings.Cut(info.AuthToken, " ")
	parsed, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
	if err != nil {
		return nil, err
	}
	roles := processRoles{}
	list, _ := parsed.Claims.(jwt.MapClaims)[m.claimName].([]interface{})
	for _, p := range list {
		s, _ := p.(string)
		if ns, role, ok := strings.Cut(s, ":"); ok {
			roles[ns] = append(roles[ns], strings.ToLower(role))
		}
	}
	claims.Extensions = roles
	return claims, nil
}

type processAuthorizer struct{ logger log.Logger }

func (a *processAuthorizer) Authorize(_ context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	// What a client asks before anything else, open as in Temporal's default authorizer.
	if authorization.IsHealthCheckAPI(target.APIName) {
		return allow, nil
	}
	if claims == nil {
		return a.deny(claims, target, nil, "no token"), nil
	}
	// temporal-system:admin (the default mapper's System role), and the internal frontend.
	if claims.System&authorization.RoleAdmin != 0 {
		return allow, nil
	}
	roles, _ := claims.Extensions.(processRoles)
	service, method := api.ServiceName(target.APIName), api.MethodName(target.APIName)
	if service != api.WorkflowServicePrefix && service != api.OperatorServicePrefix && service != api.NexusServicePrefix {
		return a.deny(claims, target, nil, "the admin service is for temporal-system:admin"), nil
	}
	meta := api.GetMethodMetadata(target.APIName)
	if meta.Scope == api.ScopeCluster {
		// Cluster-wide reads (ListNamespaces, GetClusterInfo, GetSearchAttributes) for a namespace's
		// operator or admin; cluster-wide changes (Nexus endpoints, remote clusters) for the system admin.
		if meta.Access == api.AccessReadOnly && hasAnyRole(roles, "operator", "admin") {
			return allow, nil
		}
		return a.deny(claims, target, nil, "a cluster-wide call"), nil
	}
	held := roles[target.Namespace]
	for _, role := range held {
		if may(role, method, target.Request) {
			return allow, nil
		}
	}
	return a.deny(claims, target, held, ""), nil
}

// may says whether one role allows a namespace's call.
func may(role, method string, request interface{}) bool {
	switch role {
	case "admin":
		return true
	case "operator":
		return operatorCalls[method]
	case "service":
		return serviceCalls[method] && serviceMay(request)
	case "worker":
		return workerCalls[method]
	case "bridge":
		return bridgeCalls[method] && bridgeMay(request)
	}
	return false
}

// serviceMay keeps a service from cancelling an entity workflow: a cancelled card workflow's next run
// starts with no memory of the card action capabilities it spent, so one copied from history could be
// used again within its expiry (issue 50's review, F3). Operators may, with the CLI's --force.
func serviceMay(request interface{}) bool {
	if r, ok := request.(*workflowservice.RequestCancelWorkflowExecutionRequest); ok {
		return !isEntityID(r.GetWorkflowExecution().GetWorkflowId())
	}
	return true
}

// bridgeMay looks into the bridge's requests: its signal, to an entity workflow; a start only of an
// entity workflow type, under its IDs, on an entity queue; its query.
func bridgeMay(request interface{}) bool {
	switch r := request.(type) {
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		prefixes, ok := entityTypes[r.GetWorkflowType().GetName()]
		return ok && r.GetSignalName() == providerSignal && hasPrefix(r.GetWorkflowId(), prefixes) &&
			strings.HasSuffix(r.GetTaskQueue().GetName(), entityQueueSuffix)
	case *workflowservice.SignalWorkflowExecutionRequest:
		return r.GetSignalName() == providerSignal && isEntityID(r.GetWorkflowExecution().GetWorkflowId())
	case *workflowservice.QueryWorkflowRequest:
		return r.GetQuery().GetQueryType() == entityQuery && isEntityID(r.GetExecution().GetWorkflowId())
	case *workflowservice.DescribeNamespaceRequest:
		return true
	}
	return false
}

func (a *processAuthorizer) deny(claims *authorization.Claims, target *authorization.CallTarget, held []string, why string) authorization.Result {
	subject := "(no token)"
	if claims != nil {
		subject = claims.Subject
	}
	if why == "" {
		why = fmt.Sprintf("roles %v in namespace %q do not allow it", held, target.Namespace)
	}
	a.logger.Warn("temporal-authz: call denied", tag.NewStringTag("subject", subject), tag.NewStringTag("api", target.APIName),
		tag.WorkflowNamespace(target.Namespace), tag.NewStringTag("reason", why))
	return authorization.Result{Decision: authorization.DecisionDeny, Reason: fmt.Sprintf("%s: %s", api.MethodName(target.APIName), why)}
}

var allow = authorization.Result{Decision: authorization.DecisionAllow}

func main() {
	configDir := flag.String("config-dir", "config", "directory of Temporal's server config files")
	env := flag.String("env", "development", "the config file to load from it (<env>.yaml, over base.yaml)")
	zone := flag.String("zone", "", "availability zone (<env>_<zone>.yaml)")
	flag.Parse()
	if err := run(*configDir, *env, *zone); err != nil {
		fmt.Fprintf(os.Stderr, "temporal-authz: %v\n", err)
		os.Exit(1)
	}
}

func run(configDir, env, zone string) error {
	cfg, err := config.LoadConfig(env, configDir, zone)
	if err != nil {
		return err
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	auth := &cfg.Global.Authorization
	if len(auth.JWTKeyProvider.KeySourceURIs) == 0 {
		return fmt.Errorf("global.authorization.jwtKeyProvider.keySourceURIs is empty: no key to check a token with")
	}
	// The key provider fetches with net/http; file:// lets a JWKS on disk serve too.
	http.DefaultTransport.(*http.Transport).RegisterProtocol("file", http.NewFileTransport(http.Dir("/")))
	claimName := auth.PermissionsClaimName
	if claimName == "" {
		claimName = "permissions"
	}
	mapper := &roleMapper{
		jwt:       authorization.NewDefaultJWTClaimMapper(authorization.NewDefaultTokenKeyProvider(auth, logger), auth, logger),
		claimName: claimName,
	}
	audience, err := authorization.GetAudienceMapperFromConfig(auth)
	if err != nil {
		return err
	}
	dynamic := dynamicconfig.Client(dynamicconfig.NewNoopClient())
	if cfg.DynamicConfigClient != nil {
		if dynamic, err = dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh()); err != nil {
			return err
		}
	}
	// Every service the config file defines: with `internal-frontend`, the server's own workers
	// (schedules, batches, deployments) go through it, whose calls bypass the JWT mapper; it must be
	// reachable only by the cluster's hosts (internode mTLS), never by clients.
	services := make([]string, 0, len(cfg.Services))
	for name := range cfg.Services {
		services = append(services, name)
	}
	sort.Strings(services)
	server, err := temporal.NewServer(
		temporal.ForServices(services),
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dynamic),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(&processAuthorizer{logger: logger}),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return mapper }),
		temporal.WithAudienceGetter(func(*config.Config) authorization.JWTAudienceMapper { return audience }),
	)
	if err != nil {
		return err
	}
	logger.Info("temporal-authz: starting", tag.NewStringsTag("services", services))
	return server.Start() // returns once interrupted (SIGINT, SIGTERM)
}

func set(names ...string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

func union(sets ...map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, s := range sets {
		for n := range s {
			out[n] = true
		}
	}
	return out
}

func hasPrefix(id string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(id, p) && len(id) > len(p) {
			return true
		}
	}
	return false
}

func isEntityID(id string) bool {
	for _, prefixes := range entityTypes {
		if hasPrefix(id, prefixes) {
			return true
		}
	}
	return false
}

func hasAnyRole(roles processRoles, wanted ...string) bool {
	for _, held := range roles {
		for _, r := range held {
			if slices.Contains(wanted, r) {
				return true
			}
		}
	}
	return false
}
