// Partner onboarding, one dependent step after another: look up the
// partner, create its workspace, provision every integration it asked for
// (a transient failure is retried, at most three attempts, each attempt
// numbered), invite its admins, and record a checklist of what is done
// and what is left.
async function main() {
  const partner = await get_partner({ id: partner_id });
  const ws = await create_workspace({
    partner: partner.id,
    name: partner.legal_name.toLowerCase().replace(/[^a-z0-9]+/g, "-"),
    region: partner.hq.region,
    plan: partner.contract.plan,
  });

  const integrations = [];
  for (const name of partner.requested_integrations) {
    let result = null;
    let attempts = 0;
    let lastError = null;
    while (attempts < 3 && result === null) {
      attempts++;
      try {
        result = await provision_integration({ workspace: ws.id, integration: name, attempt: attempts });
      } catch (e) {
        lastError = e;
        if (e.code !== "UNAVAILABLE") break;
      }
    }
    integrations.push(
      result
        ? { name, status: "ready", attempts, endpoint: result.endpoint }
        : { name, status: "failed", attempts, error: `${lastError.code}: ${lastError.message}` }
    );
  }

  const invited = [];
  for (const admin of partner.contacts.filter((c) => c.role === "admin")) {
    const inv = await send_invite({ workspace: ws.id, email: admin.email, role: "owner" });
    invited.push(inv.invite_id);
  }

  const failed = integrations.filter((i) => i.status === "failed");
  const checklist = [
    { item: "workspace", done: true },
    { item: "integrations", done: failed.length === 0 },
    { item: "admins invited", done: invited.length > 0 },
    { item: "billing contact", done: partner.contacts.some((c) => c.role === "billing") },
    { item: "data residency", done: partner.hq.region === ws.region },
  ];
  const open = checklist.filter((c) => !c.done).map((c) => c.item);
  const rec = await record_checklist({
    partner: partner.id,
    workspace: ws.id,
    items: checklist.map((c) => `${c.done ? "[x]" : "[ ]"} ${c.item}`),
    status: open.length === 0 ? "complete" : "blocked",
  });
  return {
    partner: partner.id,
    workspace: ws.id,
    slug: ws.slug,
    integrations,
    invited,
    open,
    record: rec.id,
  };
}
main();
