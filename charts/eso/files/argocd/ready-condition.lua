-- Argo CD health check of eso's kinds that carry a Ready condition.
-- From its Ready condition: True is Healthy, False is Degraded (with the
-- condition's reason and message), Unknown or absent is Progressing, and so
-- is a status that describes an older generation than the object's (eso has
-- not looked at the latest change yet). It calls no Lua library, so it runs
-- as an argocd-cm customization without resource.customizations.useOpenLibs.
local hs = {}
local generation = 0
if obj.metadata ~= nil and obj.metadata.generation ~= nil then
  generation = tonumber(obj.metadata.generation) or 0
end

local function older(observed)
  return observed ~= nil and (tonumber(observed) or 0) < generation
end

local function describe(c)
  if c.reason ~= nil and c.reason ~= "" and c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  if c.message ~= nil and c.message ~= "" then
    return c.message
  end
  return c.reason or ""
end

if obj.status ~= nil and obj.status.conditions ~= nil then
  if older(obj.status.observedGeneration) then
    hs.status = "Progressing"
    hs.message = "Waiting for eso to reconcile generation " .. generation .. " of the " .. (obj.kind or "object")
    return hs
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      if older(c.observedGeneration) then
        hs.status = "Progressing"
        hs.message = "Waiting for eso to reconcile generation " .. generation .. " of the " .. (obj.kind or "object")
      elseif c.status == "True" then
        hs.status = "Healthy"
        hs.message = describe(c)
      elseif c.status == "False" then
        hs.status = "Degraded"
        hs.message = describe(c)
      else
        hs.status = "Progressing"
        hs.message = describe(c)
      end
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for eso to reconcile the " .. (obj.kind or "object")
return hs
