async function main() {
  let cursor = null;
  const seen = [];
  let pages = 0;
  do {
    const page = await crm.list_contacts({ limit: 3, cursor });
    pages++;
    for (const c of page.contacts) {
      if (c.email.endsWith("@example.com")) seen.push(c.email);
    }
    cursor = page.next_cursor;
  } while (cursor);
  console.log("%d pages, %d matching contacts", pages, seen.length);
  return seen;
}
main();
