package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
)

// The attributes agcore records, beyond the GenAI keys of semconv.
const (
	// KeySystem is gen_ai.system, the name earlier versions of the GenAI
	// conventions gave the provider; it is recorded beside
	// gen_ai.provider.name for the backends that still read it.
	KeySystem = attribute.Key("gen_ai.system")
	// KeyTurnID is the client's id of the turn's submission.
	KeyTurnID = attribute.Key("agcore.turn.id")
	// KeyTurnIndex is the turn's index in its session, from 0.
	KeyTurnIndex = attribute.Key("agcore.turn.index")
	// KeyOutcome is how a turn ended: completed, cancelled, failed, limit.
	KeyOutcome = attribute.Key("agcore.turn.outcome")
	// KeyReason says why a turn ended other than completed.
	KeyReason = attribute.Key("agcore.turn.reason")
	// KeyRoundTrips counts the model calls of a turn.
	KeyRoundTrips = attribute.Key("agcore.turn.round_trips")
	// KeyCost is the cost of a turn or model call, in the price table's
	// currency.
	KeyCost = attribute.Key("agcore.cost")
	// KeyStreaming says that a model call streamed its reply.
	KeyStreaming = attribute.Key("agcore.model.streaming")
	// KeySource is where a tool comes from: builtin, mcp, wasm, runtime.
	KeySource = attribute.Key("agcore.tool.source")
	// KeyIsError says that a tool call's result is an error the model reads.
	KeyIsError = attribute.Key("agcore.tool.is_error")
	// KeyTimeout says that a tool call's deadline passed.
	KeyTimeout = attribute.Key("agcore.tool.timeout")
	// KeyDecision is the permission decision of a tool call that asked for
	// approval (granted, denied) or that a hook blocked (blocked).
	KeyDecision = attribute.Key("agcore.permission.decision")
	// KeyDecidedBy says who decided an approval.
	KeyDecidedBy = attribute.Key("agcore.permission.decided_by")
	// KeyCompactionKind is micro or summary.
	KeyCompactionKind = attribute.Key("agcore.compaction.kind")
	// KeyTokensBefore and KeyTokensAfter size a compacted history.
	KeyTokensBefore = attribute.Key("agcore.compaction.tokens_before")
	KeyTokensAfter  = attribute.Key("agcore.compaction.tokens_after")
	// KeyForTurn says that a turn waited for the compaction.
	KeyForTurn = attribute.Key("agcore.compaction.for_turn")
	// KeyAttempt numbers a retry of a model call, from 1.
	KeyAttempt = attribute.Key("agcore.retry.attempt")
	// KeyDelay is the wait before a retry, in seconds.
	KeyDelay = attribute.Key("agcore.retry.delay_seconds")
	// KeyModel, KeyKind, KeyTool and KeySupervisor label agcore's metrics.
	KeyModel      = attribute.Key("model")
	KeyKind       = attribute.Key("kind")
	KeyTool       = attribute.Key("tool")
	KeySupervisor = attribute.Key("supervisor")
	// KeyMetricOutcome labels agcore.turns.
	KeyMetricOutcome = attribute.Key("outcome")
	KeyMetricSource  = attribute.Key("source")
)

// The GenAI keys of semconv that agcore records.
var (
	keyOperation     = semconv.GenAIOperationNameKey
	keyAgentName     = semconv.GenAIAgentNameKey
	keyConversation  = semconv.GenAIConversationIDKey
	keyProvider      = semconv.GenAIProviderNameKey
	keyRequestModel  = semconv.GenAIRequestModelKey
	keyResponseModel = semconv.GenAIResponseModelKey
	keyFinishReasons = semconv.GenAIResponseFinishReasonsKey
	keyInputTokens   = semconv.GenAIUsageInputTokensKey
	keyOutputTokens  = semconv.GenAIUsageOutputTokensKey
	keyTokenType     = semconv.GenAITokenTypeKey
	keyInputMessages = semconv.GenAIInputMessagesKey
	keyOutputMessage = semconv.GenAIOutputMessagesKey
	keyToolName      = semconv.GenAIToolNameKey
	keyToolCallID    = semconv.GenAIToolCallIDKey
	keyToolType      = semconv.GenAIToolTypeKey
	keyToolArguments = semconv.GenAIToolCallArgumentsKey
	keyToolResult    = semconv.GenAIToolCallResultKey
	keyErrorType     = semconv.ErrorTypeKey
)

// The GenAI operation names, which also open the span names.
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
	// OpAwaitApproval and OpCompact are agcore's own operations.
	OpAwaitApproval = "await_approval"
	OpCompact       = "compact_history"
)
