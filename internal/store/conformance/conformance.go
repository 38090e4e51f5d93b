// Package conformance is the line's behaviour, written once and run against
// every store: the in-memory one (internal/store/memstore), miniredis and a real
// redis-server (internal/store/redisstore). A store that passes behaves as the Lua
// scripts do. Tests drive it through queue.Line with a fake clock.
package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// Open makes a fresh, empty namespace for one test and returns how to open
// a store on it; each call of the result is another server sharing the
// same data. A Redis target opens a new key prefix; a Redis Cluster target
// is one more Open.
type Open func(t *testing.T) func() queue.Store

// Run runs every behaviour test against the stores open makes.
func Run(t *testing.T, open Open, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if o.skipHeavy && heavy[c.name] {
				t.Skip("conformance: this case works at scale; it runs on the memory store and redis-server, not in an interpreter")
			}
			c.run(t, open)
		})
	}
}

// Option changes how Run runs the suite.
type Option func(*options)

type options struct{ skipHeavy bool }

// SkipHeavy skips the cases that work at scale. On miniredis, whose Lua
// runs in an interpreter, they took most of the suite's time (half a
// minute, minutes under -race) and prove nothing the memory store and
// redis-server runs of the same cases do not.
func SkipHeavy() Option { return func(o *options) { o.skipHeavy = true } }

// heavy are the cases that admit, draw or sweep thousands of tickets.
var heavy = map[string]bool{
	"TheLargestBatchIsAdmittedInOneTick": true,
	"LogPositionsMatchTheStore":          true,
	"RandomDrawIsUniform":                true,
	"FIFOUnderConcurrentEntries":         true,
	"AbandonSweepReachesALongLine":       true,
	"PresentInALongLineAndAtTheHead":     true,
}

var cases = []struct {
	name string
	run  func(*testing.T, Open)
}{
	{"EnterIsIdempotentAcrossTabs", testEnterIsIdempotentAcrossTabs},
	{"FastTrackHoldsThePaceAndNeverJumpsTheLine", testFastTrackHoldsThePaceAndNeverJumpsTheLine},
	{"FIFOUnderConcurrentEntries", testFIFOUnderConcurrentEntries},
	{"CapacityAndPaceAreNeverExceeded", testCapacityAndPaceAreNeverExceeded},
	{"TheLargestBatchIsAdmittedInOneTick", testTheLargestBatchIsAdmittedInOneTick},
	{"PaceHoldsAcrossFastTrackAndTickInOneInterval", testPaceHoldsAcrossFastTrackAndTickInOneInterval},
	{"JitterSpreadsOrderableAt", testJitterSpreadsOrderableAt},
	{"AbandonedWaitersLoseTheirPlace", testAbandonedWaitersLoseTheirPlace},
	{"PositionNeverGoesUp", testPositionNeverGoesUp},
	{"LeaveFreesThePlace", testLeaveFreesThePlace},
	{"StatusIsOnlyForTheOwner", testStatusIsOnlyForTheOwner},
	{"ClosedRoomAnswersClosed", testClosedRoomAnswersClosed},
	{"ActivationOffAdmitsEveryoneAtOnce", testActivationOffAdmitsEveryoneAtOnce},
	{"PausedRoomKeepsPlacesAndAdmitsNobody", testPausedRoomKeepsPlacesAndAdmitsNobody},
	{"TwoServersAdmitEachSlotOnce", testTwoServersAdmitEachSlotOnce},
	{"SettingsChangesApplyWithinOneTick", testSettingsChangesApplyWithinOneTick},
	{"AdaptiveRoomAdmitsAtOnceWhileTheLineIsClosed", testAdaptiveRoomAdmitsAtOnceWhileTheLineIsClosed},
	{"SwitchingActivationOffDrainsTheLine", testSwitchingActivationOffDrainsTheLine},
	{"FastTrackAfterAPaceChange", testFastTrackAfterAPaceChange},
	{"StatusManyIsASignOfLifeAndReportsTheGone", testStatusManyIsASignOfLifeAndReportsTheGone},
	{"CompleteFreesTheSlotAndStopsTheToken", testCompleteFreesTheSlotAndStopsTheToken},
	{"ExpiredSlotsAreReclaimedThenPurged", testExpiredSlotsAreReclaimedThenPurged},
	{"LeaveEndsATicketOnlyForItsOwner", testLeaveEndsATicketOnlyForItsOwner},
	{"TokensHaveOneHolder", testTokensHaveOneHolder},
	{"HandoffCodesRedeemOnceAndRebind", testHandoffCodesRedeemOnceAndRebind},
	{"PerClientLimits", testPerClientLimits},
	{"PricedPlaces", testPricedPlaces},
	{"NoShowsKeepPricingTheirNetwork", testNoShowsKeepPricingTheirNetwork},
	{"RestoreHoldsTheCapacityOnce", testRestoreHoldsTheCapacityOnce},
	{"RoomsAndEpoch", testRoomsAndEpoch},
	{"ListenHearsAdmissionsAndRoomChanges", testListenHearsAdmissionsAndRoomChanges},
	{"DrillReachesEveryServer", testDrillReachesEveryServer},
	{"LeaseHasOneHolderAtATime", testLeaseHasOneHolderAtATime},
	{"LeaseKeepsThePaceAcrossHolders", testLeaseKeepsThePaceAcrossHolders},
	{"LeaseGoesWithTheRoom", testLeaseGoesWithTheRoom},
	{"RandomAdmitsByDraw", testRandomAdmitsByDraw},
	{"RandomDrawIsUniform", testRandomDrawIsUniform},
	{"PassthroughAdmitsEveryoneAndCounts", testPassthroughAdmitsEveryoneAndCounts},
	{"RejectTurnsEveryoneAwayAndKeepsPlaces", testRejectTurnsEveryoneAwayAndKeepsPlaces},
	{"SoldOutFreezesTheLineAndUndoPutsItBack", testSoldOutFreezesTheLineAndUndoPutsItBack},
	{"LineFullAtExactlyMaxWaiting", testLineFullAtExactlyMaxWaiting},
	{"LineFullHoldsAcrossServers", testLineFullHoldsAcrossServers},
	{"ScheduledEntriesWaitForTheDraw", testScheduledEntriesWaitForTheDraw},
	{"LatecomersQueueBehindTheDraw", testLatecomersQueueBehindTheDraw},
	{"LateScheduledEntryJoinsTheBack", testLateScheduledEntryJoinsTheBack},
	{"LeavingThePreQueue", testLeavingThePreQueue},
	{"DrawTakesOnePlaceANetworkARound", testDrawTakesOnePlaceANetworkARound},
	{"TwoServersDrawOnce", testTwoServersDrawOnce},
	{"DrawIsRefusedTwiceAndWhenStale", testDrawIsRefusedTwiceAndWhenStale},
	{"LogPositionsMatchTheStore", testLogPositionsMatchTheStore},
	{"LogSnapshotWhileTheLineMoves", testLogSnapshotWhileTheLineMoves},
	{"LogEntriesAreOnePerOperation", testLogEntriesAreOnePerOperation},
	{"ConcurrentEntersAreAsIfOneByOne", testConcurrentEntersAreAsIfOneByOne},
	{"LogGapAfterTheRoomIsDeleted", testLogGapAfterTheRoomIsDeleted},
	{"AliveKeepsOpenWaitersFromAbandon", testAliveKeepsOpenWaitersFromAbandon},
	{"PresentKeepsOpenWaitersFromAbandon", testPresentKeepsOpenWaitersFromAbandon},
	{"PresentInALongLineAndAtTheHead", testPresentInALongLineAndAtTheHead},
	{"StatusGivesTheWaitersScore", testStatusGivesTheWaitersScore},
	{"AbandonSweepReachesALongLine", testAbandonSweepReachesALongLine},
	{"NoShowsLoseTheSlotToTheNextInLine", testNoShowsLoseTheSlotToTheNextInLine},
	{"ArrivingKeepsTheSlot", testArrivingKeepsTheSlot},
	{"IdleVisitorsLoseTheSlot", testIdleVisitorsLoseTheSlot},
	{"UnarrivedSlotsArePerNetwork", testUnarrivedSlotsArePerNetwork},
	{"LapsesWaitWhileArrivalsCannotBeSeen", testLapsesWaitWhileArrivalsCannotBeSeen},
	{"AdmittedRateIsMeasured", testAdmittedRateIsMeasured},
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type fixture struct {
	line   *queue.Line
	store  queue.Store
	server func() queue.Store // another server on the same data
	clock  *clockwork.FakeClock
	keys   *token.Keyset
}

// newFixture gives a line on a fresh store, with a fake clock and a jitter
// that is fixed unless the test sets one.
func newFixture(t *testing.T, open Open, jitter func(time.Duration) time.Duration) *fixture {
	t.Helper()
	return newFixtureOn(t, open(t), jitter)
}

// newFixtureOn gives a line, as one server, on the store that server opens.
func newFixtureOn(t *testing.T, server func() queue.Store, jitter func(time.Duration) time.Duration) *fixture {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys.Issuer = "http://waitroom.test"
	clock := clockwork.NewFakeClockAt(t0)
	if jitter == nil {
		jitter = func(max time.Duration) time.Duration { return max / 2 }
	}
	store := server()
	return &fixture{
		line:  queue.NewLine(store, keys, queue.LineOptions{Clock: clock, Jitter: jitter}),
		store: store, server: server, clock: clock, keys: keys,
	}
}

func (f *fixture) room(t *testing.T, name string, edit func(*queue.Settings)) queue.Settings {
	t.Helper()
	s := queue.DefaultSettings()
	if edit != nil {
		edit(&s)
	}
	s.Normalize()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := f.line.PutRoom(context.Background(), name, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fixture) enter(t *testing.T, room, who string) queue.Ticket {
	t.Helper()
	tk, _, err := f.line.Enter(context.Background(), room, who)
	if err != nil {
		t.Fatalf("enter %s: %v", who, err)
	}
	return tk
}

func (f *fixture) status(t *testing.T, room string, tk queue.Ticket) queue.Ticket {
	t.Helper()
	got, _, err := f.line.Status(context.Background(), room, tk.ID, tk.Identity)
	if err != nil {
		t.Fatalf("status %s: %v", tk.ID, err)
	}
	return got
}

func (f *fixture) tick(t *testing.T, room string) queue.TickResult {
	t.Helper()
	s, err := f.line.Settings(context.Background(), room)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.line.Tick(context.Background(), room, &s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fill makes the line non-empty so later entries cannot take the fast track.
func (f *fixture) blockFastTrack(t *testing.T, room string) {
	t.Helper()
	s, _ := f.line.Settings(context.Background(), room)
	for i := int64(0); i < s.BatchSize; i++ {
		f.enter(t, room, fmt.Sprintf("v:fast-%d", i))
	}
}
