@0xf18a4b8c0a1b6cf6;
# The control protocol between themis-coordinator, themis-nodelet, launchers and themisctl.
# One Envelope per ZeroMQ message; see docs/protocols/control.md and docs/protocols/heartbeat.md.

$import "/capnp/c++.capnp".namespace("themis::wire");

const protocolVersion :UInt16 = 1;

struct Envelope {
  version @0 :UInt16;      # must equal protocolVersion; anything else gets an ErrorReply
  requestId @1 :UInt64;    # echoed in the reply
  body :union {
    error @2 :ErrorReply;
    ack @3 :Ack;
    register @4 :Register;
    registered @5 :Registered;
    heartbeat @6 :Heartbeat;
    heartbeatAck @7 :HeartbeatAck;
    launch @8 :Launch;
    stop @9 :Stop;
    exited @10 :Exited;
    offer @11 :OfferMsg;
    bid @12 :BidMsg;
    grant @13 :GrantMsg;
    submit @14 :Submit;
    submitted @15 :Submitted;
    cancel @16 :Cancel;
    query @17 :Query;
    queryReply @18 :QueryReply;
    attach @19 :Attach;
    attached @20 :Attached;
    launchJob @21 :LaunchJob;
    stopJob @22 :StopJob;
    appStatus @23 :AppStatus;
    startLauncher @24 :StartLauncher;
    stopLauncher @25 :StopLauncher;
    launcherExited @26 :LauncherExited;
    nodeletStopping @27 :NodeletStopping;
    drain @28 :Drain;
    resume @29 :Resume;
    readLog @30 :ReadLog;
    logChunk @31 :LogChunk;
    appStatusAck @32 :AppStatusAck;
  }
}

enum ErrorCode {
  malformed @0;        # not a Cap'n Proto Envelope
  badVersion @1;       # protocol version not supported
  unknownMessage @2;   # a body this peer does not handle
  denied @3;           # the principal may not do this
  notFound @4;
  badSpec @5;          # app spec rejected; message names the field
  notRegistered @6;    # heartbeat from a host the coordinator has no session for: register again
  internal @7;
  staleGrant @8;       # launchJob on a lease that ended (expired, released) after the grant it acted on:
                       # the launcher's view is out of date, not wrong; it waits for the next grant
}

struct ErrorReply {
  code @0 :ErrorCode;
  message @1 :Text;
}

struct Ack {
  message @0 :Text;
}

struct GpuDecl {
  localIndex @0 :UInt32;   # index on its host (CUDA device number)
  model @1 :Text;
}

struct SlotDecl {
  gpus @0 :List(GpuDecl);
}

struct RunningWorker {
  app @0 :Int64;
  job @1 :Int64;
  attempt @2 :UInt32;
  rank @3 :UInt32;
  pid @4 :Int32;
}

# nodelet -> coordinator, on start and whenever the coordinator answers notRegistered.
struct Register {
  host @0 :Text;
  rack @1 :Text;
  slots @2 :List(SlotDecl);
  running @3 :List(RunningWorker);   # what it already supervises (coordinator restart, reconnect)
  nodeletVersion @4 :Text;
  address @5 :Text;                  # where other ranks reach this host (rendezvous)
  launchers @6 :List(RunningLauncher);  # app launchers it supervises (docs/launcher.md)
}

struct Registered {
  heartbeatIntervalMs @0 :UInt32;
  lives @1 :UInt32;                  # missed heartbeats tolerated before the host is declared down (3)
  firstGpu @2 :Int32;                # cluster-wide index of the host's local GPU 0
}

struct Heartbeat {
  seq @0 :UInt64;
  running @1 :List(RunningWorker);
  launchers @2 :List(RunningLauncher);
}

struct HeartbeatAck {
  seq @0 :UInt64;
  nextIntervalMs @1 :UInt32;         # send the next heartbeat within this interval
  lives @2 :UInt32;
}

struct EnvVar {
  name @0 :Text;
  value @1 :Text;
}

# coordinator -> nodelet: start one rank.
struct Launch {
  app @0 :Int64;
  job @1 :Int64;
  attempt @2 :UInt32;
  rank @3 :UInt32;
  worldSize @4 :UInt32;
  rendezvous @5 :Text;               # host:port of rank 0
  devices @6 :List(UInt32);          # local GPU indices -> CUDA_VISIBLE_DEVICES
  command @7 :List(Text);
  env @8 :List(EnvVar);
  workdir @9 :Text;
  checkpointDir @10 :Text;
  graceMs @11 :UInt32;
  account @12 :Text;                 # Unix account the rank runs as: the app owner's, from the coordinator's
                                     # [users] table (docs/admin.md); a root nodelet refuses an empty one
}

# coordinator -> nodelet: stop every rank of (app, job, attempt) here: SIGTERM, grace, SIGKILL.
struct Stop {
  app @0 :Int64;
  job @1 :Int64;
  attempt @2 :UInt32;
  graceMs @3 :UInt32;
  reason @4 :Text;
}

# nodelet -> coordinator: a rank ended.
struct Exited {
  app @0 :Int64;
  job @1 :Int64;
  attempt @2 :UInt32;
  rank @3 :UInt32;
  exitCode @4 :Int32;                # -1 when killed by a signal
  signal @5 :Int32;                  # 0 when it exited normally
  logTail @6 :Text;                  # last lines of the rank's log
  stopOrdered @7 :Bool;              # set by the coordinator when it forwards the exit to a launcher: it had
                                     # ordered this attempt to stop (a preemption, not a completion)
}

struct OfferMsg {
  round @0 :Int64;
  gpus @1 :List(Int32);
  deadlineMs @2 :UInt32;
  activeApps @3 :UInt32;             # apps active now, the recipient included (its N_avg)
}

struct BidRowMsg {
  gpus @0 :List(Int32);
  rho @1 :Float64;
  scope @2 :UInt8;                   # how far gpus are interchangeable (core/bid.h ShapeScope): 0 exact (only
                                     # these GPUs; what a sender without the field means), 1 slot, 2 machine,
                                     # 3 rack, 4 anywhere; the bid's validation drops a row with another value
}

struct BidMsg {
  app @0 :Int64;
  round @1 :Int64;
  rhoNoNew @2 :Float64;
  rows @3 :List(BidRowMsg);
}

struct LeaseMsg {
  gpu @0 :Int32;
  job @1 :Int64;
  start @2 :Float64;                 # unix seconds
  expiry @3 :Float64;
  id @4 :Int64;                      # the lease (leases.id): launchJob names the lease it acts on
}

struct GrantMsg {
  app @0 :Int64;
  round @1 :Int64;                   # the round that decided it; 0: sent outside a round (on attach, after a
                                     # give-back, a lost lease or the probe's end)
  leases @2 :List(LeaseMsg);
  probe @3 :Bool;                    # the app's first-iteration probe (docs/reliability.md "Probe"): its one
                                     # lease runs one job on one GPU, whatever the app's gpus_per_job
  sentAt @4 :Float64;                # the coordinator's clock when it sent the grant (unix seconds): a lease
                                     # has expiry - sentAt left when the grant arrives, whatever the skew
                                     # between the two hosts' clocks (0: an older coordinator)
}

struct Submit {
  spec @0 :Text;                     # app spec, TOML (docs/app-spec.md)
  specName @1 :Text;                 # file name, for error messages
  token @2 :Text;                    # idempotency key chosen by the client (at most 128 bytes; empty: none):
                                     # a repeat from the same owner is answered with the app it made
}

struct Submitted {
  app @0 :Int64;
  name @1 :Text;
  jobs @2 :UInt32;
}

struct Cancel {
  app @0 :Int64;
}

enum QueryKind {
  apps @0;
  app @1;
  nodes @2;
  leases @3;
  rounds @4;
  explain @5;
  whoami @6;
  history @7;                        # finished apps and per-user totals (since, until, user)
}

struct Query {
  kind @0 :QueryKind;
  app @1 :Int64;
  since @2 :Float64;                 # history: apps that finished at or after this (unix seconds; 0: any)
  until @3 :Float64;                 # history: ... and before this (0: now)
  user @4 :Text;                     # history: only this owner's apps (empty: everyone's)
}

struct QueryReply {
  json @0 :Text;                     # {"apiVersion":"themis/v1","kind":...}
}

# ---- launchers (docs/launcher.md, "The launcher protocol")

# launcher -> coordinator: this connection is app `app`'s launcher (replaces an earlier one).
struct Attach {
  app @0 :Int64;
  generation @1 :UInt32;             # 0: started by hand; else the coordinator's StartLauncher generation
}

struct HostTopology {
  name @0 :Text;
  rack @1 :Text;
  firstGpu @2 :Int32;
  gpusPerSlot @3 :List(UInt32);      # in slot order; the host's GPUs are firstGpu .. firstGpu + sum - 1
}

struct JobDecl {
  job @0 :Int64;
  hparams @1 :Text;                  # JSON object, values as the spec wrote them
  attempt @2 :UInt32;                # the last attempt the coordinator knows; the next launch is attempt + 1
  state @3 :Text;
}

struct Attached {
  app @0 :Int64;
  name @1 :Text;
  spec @2 :Text;                     # the submitted spec, verbatim (the launcher reads [scheduler])
  submittedAt @3 :Float64;           # unix seconds
  leaseMs @4 :UInt32;
  gpusPerJob @5 :UInt32;
  maxConcurrentJobs @6 :UInt32;
  activeApps @7 :UInt32;
  hosts @8 :List(HostTopology);      # in GPU order
  jobs @9 :List(JobDecl);
  launcherState @10 :Text;           # the last `state` an earlier launcher of the app reported; empty if none
}

# launcher -> coordinator: start the job's ranks, rank r on gpus[r]. Refused unless every GPU is leased
# to the app and no other job runs on it.
struct LaunchJob {
  app @0 :Int64;
  job @1 :Int64;
  attempt @2 :UInt32;                # > the job's last attempt
  gpus @3 :List(Int32);
  env @4 :List(EnvVar);              # added to the ranks' environment (wins over the app's)
  leases @5 :List(Int64);            # the lease each GPU was held under in the grant the launch acts on
                                     # (LeaseMsg.id, in the order of gpus; empty: none named): a launch
                                     # whose named lease has ended is answered staleGrant, not denied
}

# launcher -> coordinator: stop an attempt (SIGTERM, checkpoint, exit); attempt 0 with reason
# "EarlyStopped" marks a job that will never run again as done.
struct StopJob {
  app @0 :Int64;
  job @1 :Int64;
  attempt @2 :UInt32;
  reason @3 :Text;
}

# launcher -> coordinator, every second or on a change.
struct AppStatus {
  app @0 :Int64;
  rho @1 :Float64;                   # current ρ; the achieved ρ once finished
  progress @2 :Float64;              # 0..1
  finished @3 :Bool;
  failed @4 :Bool;
  bestLoss @5 :Float64;              # NaN: none yet
  summary @6 :Text;
  demand @7 :UInt32;                 # more GPUs it could use now
  state @8 :Text;                    # JSON the launcher resumes from if it is restarted (opaque to the coordinator)
  iterationsDone @9 :UInt64;         # iterations its jobs trained, each counted up to its phase target
  iterationsPlanned @10 :UInt64;     # iterations its scheduler runs in all (0: unknown, an older launcher)
  phase @11 :Text;                   # what it does now, one word or two: "train", "halving 2/3", "done"
  release @12 :List(Int32);          # GPUs it holds and gives back now: no job of its runs on them and none
                                     # waits to start (docs/launcher.md "Idle GPUs"); the coordinator ends
                                     # those leases and sends a new grant
  slowdowns @13 :List(Float64);      # S per locality level: same slot, same machine, same rack, cross rack
                                     # (each >= 1: how much slower one of its gangs runs placed so); the
                                     # coordinator scores leftover sets and machine holds by them (docs/arbiter.md);
                                     # empty: not reported (an older launcher), every set counts as well placed
  remaining @14 :Float64;            # seconds it still needs on its fair share (bidder AppModel::remaining_at_fair_share),
                                     # how long it stays for the other apps' contention forecasts; 0: not reported
}

# coordinator -> launcher, the answer to an appStatus that reported `remaining`: the apps it shares the cluster
# with, now and on average over the rest of its life (docs/bidder.md, "N_avg ahead"). Its ranking key uses both.
struct AppStatusAck {
  activeApps @0 :UInt32;             # apps active now, the recipient included
  contentionAhead @1 :Float64;       # bidder::contention_ahead over its `remaining` and the other apps' (>= 1)
}

# ---- launchers started by the coordinator through a nodelet (docs/launcher.md, "Managed launchers")

struct RunningLauncher {
  app @0 :Int64;
  generation @1 :UInt32;
  pid @2 :Int32;
}

# coordinator -> nodelet: start themis-launch for `app`. In CURVE mode `secretKey`/`publicKey` are the
# launcher's own key pair (Z85), enrolled by the coordinator for this generation only; the nodelet
# writes them to a 0600 certificate file. Empty in insecure mode.
struct StartLauncher {
  app @0 :Int64;
  generation @1 :UInt32;             # increases with every start of the app's launcher
  publicKey @2 :Text;
  secretKey @3 :Text;
  account @4 :Text;                  # Unix account the launcher runs as (as Launch.account)
}

# coordinator -> nodelet: stop that launcher (SIGTERM, then SIGKILL after graceMs).
struct StopLauncher {
  app @0 :Int64;
  generation @1 :UInt32;
  graceMs @2 :UInt32;
}

# nodelet -> coordinator: a launcher process ended.
struct LauncherExited {
  app @0 :Int64;
  generation @1 :UInt32;
  exitCode @2 :Int32;                # -1 when killed by a signal
  signal @3 :Int32;
  logTail @4 :Text;
}

# nodelet -> coordinator: the nodelet is shutting down cleanly (SIGTERM, systemctl stop). The coordinator ends
# its session at once, as for a lost host, and records HostStopped instead of HostDown. Answered with an Ack.
struct NodeletStopping {
  reason @0 :Text;
}

# ---- host maintenance (themisctl drain/resume; admins only), answered with an Ack

# themisctl -> coordinator: lease none of the host's GPUs again; its leases end at their expiry. Draining a
# drained host replaces the reason.
struct Drain {
  host @0 :Text;
  reason @1 :Text;                   # required: shown in themisctl hosts
}

# themisctl -> coordinator: the host's GPUs may be leased again.
struct Resume {
  host @0 :Text;
}

# ---- job output (themisctl logs): themisctl -> coordinator -> the nodelet that ran the rank, and back

# A byte range of one rank's log (its stdout and stderr). The coordinator checks that the caller owns the
# app (or is an admin), fills in the attempt and relays it to the rank's nodelet with its own `relay` id.
struct ReadLog {
  app @0 :Int64;
  job @1 :Int64;
  attempt @2 :UInt32;                # 0: the job's latest attempt
  rank @3 :UInt32;
  offset @4 :UInt64;                 # first byte wanted
  maxBytes @5 :UInt32;               # at most this many (the nodelet sends at most 65536)
  relay @6 :UInt64;                  # coordinator -> nodelet: echoed in the LogChunk
}

# nodelet -> coordinator -> themisctl: the bytes read.
struct LogChunk {
  data @0 :Data;
  offset @1 :UInt64;                 # of data's first byte in the log
  size @2 :UInt64;                   # the log's size when it was read
  attempt @3 :UInt32;
  host @4 :Text;
  ended @5 :Bool;                    # set by the coordinator: the attempt has ended, the log grows no more
  relay @6 :UInt64;
  missing @7 :Bool;                  # the nodelet has no such log
}
