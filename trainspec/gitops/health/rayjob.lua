-- Argo CD health check for ray.io/RayJob (KubeRay 1.x), shipped by trainspec.
--
-- What the KubeRay operator writes:
--   status.jobDeploymentStatus  "" (new) -> Initializing (RayCluster being created) -> Running (job
--                               submitted) -> Complete or Failed; Waiting (interactive mode, no job
--                               submitted yet); Suspending -> Suspended while spec.suspend is true;
--                               Retrying (a failed attempt within spec.backoffLimit, then back to new);
--                               ValidationFailed (the spec was rejected).
--   status.jobStatus            the Ray job's own status: PENDING, RUNNING, STOPPED, SUCCEEDED, FAILED.
--   status.reason / .message    why it failed (AppFailed, SubmissionFailed, DeadlineExceeded, ...).
-- Kueue queues a RayJob by holding spec.suspend at true and admits it by setting it to false.
--
-- Decisions:
--   * A finished job is judged first, whatever spec.suspend says: Failed and ValidationFailed ->
--     Degraded with the reason and message; Complete -> Healthy when the Ray job SUCCEEDED, Degraded
--     when it FAILED (KubeRay before 1.1 marked failed jobs Complete) or was STOPPED before finishing.
--   * spec.suspend=true -> Suspended ("waiting for Kueue admission" when the job has the
--     kueue.x-k8s.io/queue-name label). Argo CD ranks Suspended between Healthy and Progressing, so a
--     queued job does not look broken. With spec.suspend false, Suspending/Suspended are on their way
--     back to a new start: starting.
--   * Otherwise Progressing: Retrying -> restarting; Running with the Ray job RUNNING -> running;
--     new (again after Retrying), Initializing, Waiting and Running with a PENDING Ray job -> starting
--     (said to be admitted by Kueue when the queue label is set); no status at all -> "no status yet";
--     an unknown deployment status is named in the message rather than judged.
--   * Messages carry no counters or times, so they do not change the Application on every status update.
--   * Only Lua's base library is used: Argo CD runs health scripts without the string library. Every
--     field is checked for its type before use, so a missing or odd field never raises an error.

local function field(value, key)
  if type(value) == "table" then
    return value[key]
  end
  return nil
end

local function text(value)
  if type(value) == "string" and value ~= "" then
    return value
  end
  return nil
end

local function failure(name, reason, message)
  local out = name .. " failed"
  if text(reason) ~= nil then
    out = out .. " (" .. reason .. ")"
  end
  if text(message) ~= nil then
    out = out .. ": " .. message
  end
  return out
end

local NAME = "RayJob"
local hs = {}
local status = field(obj, "status")
local deployment = text(field(status, "jobDeploymentStatus"))
local job = text(field(status, "jobStatus"))
local reason = field(status, "reason")
local message = field(status, "message")
local queue = text(field(field(field(obj, "metadata"), "labels"), "kueue.x-k8s.io/queue-name"))

if deployment == "Failed" or deployment == "ValidationFailed" then
  if text(reason) == nil then
    reason = deployment
  end
  hs.status = "Degraded"
  hs.message = failure(NAME, reason, message)
  return hs
end
if deployment == "Complete" then
  if job == "FAILED" then
    hs.status = "Degraded"
    hs.message = failure(NAME, reason, message)
  elseif job == "STOPPED" then
    hs.status = "Degraded"
    hs.message = NAME .. " was stopped before its Ray job finished"
  else
    hs.status = "Healthy"
    hs.message = NAME .. " succeeded"
  end
  return hs
end

if field(field(obj, "spec"), "suspend") == true then
  hs.status = "Suspended"
  if queue ~= nil then
    hs.message = NAME .. " is suspended: waiting for Kueue admission in queue " .. queue
  else
    hs.message = NAME .. " is suspended (spec.suspend is true)"
  end
  return hs
end

hs.status = "Progressing"
if deployment == nil and (type(status) ~= "table" or next(status) == nil) then
  hs.message = NAME .. " has no status yet"
elseif deployment == "Retrying" then
  hs.message = NAME .. " is restarting after a failed attempt"
elseif deployment == "Running" and job == "RUNNING" then
  hs.message = NAME .. " is running"
elseif deployment == nil or deployment == "Initializing" or deployment == "Running" or deployment == "Waiting"
    or deployment == "Suspending" or deployment == "Suspended" then
  local waiting = "waiting for its RayCluster"
  if deployment == "Running" then
    waiting = "waiting for the Ray job to run"
  elseif deployment == "Waiting" then
    waiting = "waiting for a Ray job to be submitted (interactive mode)"
  end
  if queue ~= nil then
    hs.message = NAME .. " was admitted by Kueue from queue " .. queue .. ": " .. waiting
  else
    hs.message = NAME .. " is starting: " .. waiting
  end
else
  hs.message = NAME .. " is in deployment status " .. deployment
end
return hs
