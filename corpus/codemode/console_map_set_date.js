(async () => {
  const events = await calendar.list_events({ day: "2024-03-01" });
  const byRoom = new Map();
  const people = new Set();
  for (const e of events) {
    if (!byRoom.has(e.room)) byRoom.set(e.room, []);
    byRoom.get(e.room).push(e.title);
    for (const p of e.attendees) people.add(p);
  }
  console.log(byRoom);
  console.log(people);
  console.log("first start:", new Date(events[0].start));
  console.log({ when: new Date(Date.UTC(2024, 2, 1, 9, 30)), rooms: byRoom, attendees: people });
  console.log(new Map([[{ k: 1 }, new Set(["a"])], ["nested", new Map([["x", [1, 2]]])]]));
  console.log(new Map(), new Set(), new Date(0));
  console.log([new Date("2024-02-29T12:00:00.000Z")]);
  console.log(new Date(NaN));
  console.log("%s | %o", new Date(86400000), new Set([1]));
  console.log(byRoom.entries());
  console.log([...people].sort());
  return { rooms: [...byRoom.keys()], people: people.size };
})();
