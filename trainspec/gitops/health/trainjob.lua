-- Argo CD health check for trainer.kubeflow.org/TrainJob (Kubeflow Trainer 2.x), shipped by trainspec.
--
-- What the Trainer controller writes:
--   status.conditions  Suspended: True (reason Suspended) while spec.suspend is true, then False (reason
--                      Resumed) once the job is resumed, e.g. admitted by Kueue.
--                      Complete / Failed: copied from the JobSet's Completed / Failed conditions, or Failed
--                      with reason DeadlineExceeded (activeDeadlineSeconds) or TrainingRuntimeNotSupported.
--   status.jobsStatus  one entry per replicated job with counts of its child Jobs (ready, active,
--                      succeeded, failed, suspended).
-- Kueue queues a job by holding spec.suspend at true and admits it by setting it to false.
--
-- Decisions:
--   * A finished job is judged first, whatever spec.suspend says: Failed=True -> Degraded with the
--     condition's reason and message; Complete=True -> Healthy.
--   * spec.suspend=true -> Suspended ("waiting for Kueue admission" when the job has the
--     kueue.x-k8s.io/queue-name label). Argo CD ranks Suspended between Healthy and Progressing, so a
--     queued job does not look broken.
--   * Otherwise Progressing: "running" once a child Job has all its pods ready; "starting" while it has
--     none (said to be admitted by Kueue when the queue label is set); "no status yet" before the
--     controller has written anything.
--   * TrainJob has no Restarting condition: JobSet restarts show as starting, then running again.
--   * Messages carry no counters or times, so they do not change the Application on every status update.
--   * Only Lua's base library is used: Argo CD runs health scripts without the string library. Every
--     field is checked for its type before use, so a missing or odd field never raises an error.

local function field(value, key)
  if type(value) == "table" then
    return value[key]
  end
  return nil
end

local function condition(status, kind)
  local conditions = field(status, "conditions")
  if type(conditions) ~= "table" then
    return nil
  end
  for _, c in ipairs(conditions) do
    if field(c, "type") == kind and field(c, "status") == "True" then
      return c
    end
  end
  return nil
end

local function has_items(value)
  return type(value) == "table" and next(value) ~= nil
end

local function failure(name, c)
  local reason = field(c, "reason")
  local message = field(c, "message")
  local text = name .. " failed"
  if type(reason) == "string" and reason ~= "" then
    text = text .. " (" .. reason .. ")"
  end
  if type(message) == "string" and message ~= "" then
    text = text .. ": " .. message
  end
  return text
end

local NAME = "TrainJob"
local hs = {}
local status = field(obj, "status")
local queue = field(field(field(obj, "metadata"), "labels"), "kueue.x-k8s.io/queue-name")
if type(queue) ~= "string" or queue == "" then
  queue = nil
end

local failed = condition(status, "Failed")
if failed ~= nil then
  hs.status = "Degraded"
  hs.message = failure(NAME, failed)
  return hs
end
if condition(status, "Complete") ~= nil then
  hs.status = "Healthy"
  hs.message = NAME .. " succeeded"
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
local jobs = field(status, "jobsStatus")
if type(jobs) == "table" then
  for _, job in ipairs(jobs) do
    local ready = field(job, "ready")
    if type(ready) == "number" and ready > 0 then
      hs.message = NAME .. " is running"
      return hs
    end
  end
end

if not has_items(jobs) and not has_items(field(status, "conditions")) then
  hs.message = NAME .. " has no status yet"
elseif queue ~= nil then
  hs.message = NAME .. " was admitted by Kueue from queue " .. queue .. ": waiting for its pods to be ready"
else
  hs.message = NAME .. " is starting: waiting for its pods to be ready"
end
return hs
