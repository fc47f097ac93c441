-- Argo CD health check for kubeflow.org/PyTorchJob and JAXJob (Training Operator v1) and MPIJob
-- (mpi-operator v2beta1), shipped by trainspec: the three write the same status.conditions.
--
-- What the controllers write, as a list of conditions of which several can be True at once:
--   Created     True once the controller has seen the job.
--   Suspended   True while spec.runPolicy.suspend is true; False (reason ...Resumed) once resumed,
--               e.g. admitted by Kueue.
--   Running     True while the job's pods run; set False when it is suspended or finishes.
--   Restarting  True while failed replicas are restarted under their restartPolicy (Training Operator;
--               it replaces Running, and Running replaces it).
--   Succeeded   True when the job is done.
--   Failed      True with a reason and message (a failed replica, the backoff limit, the deadline, an
--               evicted MPI worker); the Training Operator never changes conditions after it.
-- Kueue queues a job by holding spec.runPolicy.suspend at true and admits it by setting it to false.
--
-- Decisions:
--   * A finished job is judged first, whatever runPolicy.suspend says: Failed=True -> Degraded with the
--     condition's reason and message; Succeeded=True -> Healthy.
--   * spec.runPolicy.suspend=true -> Suspended ("waiting for Kueue admission" when the job has the
--     kueue.x-k8s.io/queue-name label). Argo CD ranks Suspended between Healthy and Progressing, so a
--     queued job does not look broken.
--   * Otherwise Progressing: Restarting=True -> restarting, with the condition's message; Running=True
--     -> running; any other condition (Created, Suspended=False) -> starting (said to be admitted by
--     Kueue when the queue label is set); no condition at all -> "no status yet".
--   * The job's kind names it in every message, so one script serves the three kinds.
--   * Messages carry no counters or times, so they do not change the Application on every status update
--     (the Restarting message is the controller's own and changes only when the job restarts again).
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

local hs = {}
local name = text(field(obj, "kind")) or "Job"
local status = field(obj, "status")
local queue = text(field(field(field(obj, "metadata"), "labels"), "kueue.x-k8s.io/queue-name"))

local failed = condition(status, "Failed")
if failed ~= nil then
  local reason = text(field(failed, "reason"))
  local message = text(field(failed, "message"))
  hs.status = "Degraded"
  hs.message = name .. " failed"
  if reason ~= nil then
    hs.message = hs.message .. " (" .. reason .. ")"
  end
  if message ~= nil then
    hs.message = hs.message .. ": " .. message
  end
  return hs
end
if condition(status, "Succeeded") ~= nil then
  hs.status = "Healthy"
  hs.message = name .. " succeeded"
  return hs
end

if field(field(field(obj, "spec"), "runPolicy"), "suspend") == true then
  hs.status = "Suspended"
  if queue ~= nil then
    hs.message = name .. " is suspended: waiting for Kueue admission in queue " .. queue
  else
    hs.message = name .. " is suspended (spec.runPolicy.suspend is true)"
  end
  return hs
end

hs.status = "Progressing"
local restarting = condition(status, "Restarting")
local conditions = field(status, "conditions")
if restarting ~= nil then
  hs.message = name .. " is restarting"
  local message = text(field(restarting, "message"))
  if message ~= nil then
    hs.message = hs.message .. ": " .. message
  end
elseif condition(status, "Running") ~= nil then
  hs.message = name .. " is running"
elseif type(conditions) ~= "table" or next(conditions) == nil then
  hs.message = name .. " has no status yet"
elseif queue ~= nil then
  hs.message = name .. " was admitted by Kueue from queue " .. queue .. ": waiting for its pods to run"
else
  hs.message = name .. " is starting: waiting for its pods to run"
end
return hs
