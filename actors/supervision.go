package actors

import "github.com/asynkron/protoactor-go/actor"

func restartAlways(any) actor.Directive { return actor.RestartDirective }

// parentNotifier wraps a supervisor strategy so that the supervising actor
// also hears of each child failure as a childFailed message, and can end the
// work that was in flight on the child at once instead of waiting for a
// reply that will never come.
type parentNotifier struct{ inner actor.SupervisorStrategy }

func notifyParent(inner actor.SupervisorStrategy) actor.SupervisorStrategy {
	return parentNotifier{inner: inner}
}

func (p parentNotifier) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID,
	rs *actor.RestartStatistics, reason any, message any) {
	if parent, ok := sup.(interface{ Self() *actor.PID }); ok {
		sys.Root.Send(parent.Self(), &childFailed{Reason: reason, Message: message})
	}
	p.inner.HandleFailure(sys, sup, child, rs, reason, message)
}
