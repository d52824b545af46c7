-- Argo CD health of vhost-broker's orders, c5c3.io RabbitMQVhost and MariaDBDatabase (docs/gitops.md).
-- Argo CD runs a check from argocd-cm in gopher-lua (Lua 5.1) with the base and table libraries only:
-- no string or math library, so messages are joined with `..` and nothing is searched in them.
--
--   Healthy      Ready is True for the current spec, and the Secret carries the password generation
--                spec.passwordGeneration asks for
--   Progressing  the operator has not reported on the current spec yet, a rotation the spec asks for is
--                under way, the order waits for something that comes by itself (its vhost or database,
--                the bus or server, the backup) or retries a failure, or the order is being deleted
--   Degraded     a condition whose reason needs a person: the operator's Warning reasons
local hs = {}

-- The reasons a False condition needs a person for (the operator emits a Warning event for them).
-- Every other False reason is a wait or a failure the operator retries by itself.
local needsAPerson = {
  -- every order kind
  ControlPlaneNotFound = true,
  NamespaceNotAssigned = true,
  SecretsOutOfReach = true,
  ClusterNameTooLong = true,
  DeliveryRefused = true,
  GatekeeperRejected = true,
  -- RabbitMQVhost
  TopologyOperatorNotInstalled = true,
  VhostFailed = true,
  MessagingNotDeclared = true,
  MessagingNotManaged = true,
  MessagingNotPublished = true,
  -- MariaDBDatabase
  SqlOperatorNotInstalled = true,
  DatabaseFailed = true,
  DatabaseNotDeclared = true,
  DatabaseNotPublished = true,
}

-- The sub-conditions, in the order they are reported: the kind's resource condition, then delivery.
local subConditions = { "VhostReady", "DatabaseReady", "DeliveryReady" }

local function find(conditions, type)
  for _, c in ipairs(conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local function said(c)
  local text = c.type .. " " .. tostring(c.reason)
  if c.message ~= nil and c.message ~= "" then
    text = text .. ": " .. c.message
  end
  return text
end

local metadata = obj.metadata or {}
local spec = obj.spec or {}
local status = obj.status or {}
local conditions = status.conditions or {}
local generation = metadata.generation or 0
local ready = find(conditions, "Ready")

-- Argo CD itself reads an object being deleted as Progressing "Pending deletion" before any check
-- runs; this says the same for other callers, with the teardown step that holds the finalizer.
if metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "the order is being deleted"
  if ready ~= nil and ready.reason == "Deleting" and ready.message ~= nil then
    hs.message = hs.message .. ": " .. ready.message
  end
  return hs
end

if ready == nil then
  hs.status = "Progressing"
  hs.message = "waiting for vhost-broker to report on the order"
  return hs
end

local observed = status.observedGeneration or 0
if ready.observedGeneration ~= nil and ready.observedGeneration < observed then
  observed = ready.observedGeneration
end
if observed < generation then
  hs.status = "Progressing"
  hs.message = "vhost-broker has not reported on generation "
    .. tostring(generation)
    .. " of the order yet (it reported on "
    .. tostring(observed)
    .. ")"
  return hs
end

if ready.status == "True" then
  local wanted = spec.passwordGeneration or 1
  if wanted < 1 then
    wanted = 1
  end
  local delivered = status.passwordGeneration or 0
  if delivered < wanted then
    -- A rotation waits while a grace period runs: the order never holds more than two users.
    hs.status = "Progressing"
    hs.message = "rotating to password generation " .. tostring(wanted) .. " (spec.passwordGeneration)"
    if status.previousPasswordGeneration ~= nil and status.previousPasswordDeleteAt ~= nil then
      hs.message = hs.message
        .. " once password generation "
        .. tostring(status.previousPasswordGeneration)
        .. " is swept after its grace period, at "
        .. status.previousPasswordDeleteAt
    end
    hs.message = hs.message .. "; the Secret carries generation " .. tostring(delivered) .. " until then, which stays valid"
    return hs
  end
  hs.status = "Healthy"
  hs.message = ready.message or "Ready"
  if status.previousPasswordGeneration ~= nil and status.previousPasswordDeleteAt ~= nil then
    hs.message = hs.message
      .. "; password generation "
      .. tostring(status.previousPasswordGeneration)
      .. " stays valid until "
      .. status.previousPasswordDeleteAt
  end
  return hs
end

-- Ready is False or Unknown. A reason of its own (a gatekeeper plugin's rejection) speaks for itself.
if needsAPerson[ready.reason] then
  hs.status = "Degraded"
  hs.message = said(ready)
  return hs
end

-- Else the sub-conditions say why: the first that needs a person makes the order Degraded, and
-- otherwise the first that is not True says what the order waits for.
local waiting = nil
for _, type in ipairs(subConditions) do
  local c = find(conditions, type)
  if c ~= nil and c.status ~= "True" then
    if needsAPerson[c.reason] then
      hs.status = "Degraded"
      hs.message = said(c)
      return hs
    end
    if waiting == nil then
      waiting = c
    end
  end
end

hs.status = "Progressing"
if waiting ~= nil then
  hs.message = said(waiting)
else
  hs.message = said(ready)
end
return hs
