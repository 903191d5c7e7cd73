async () => {
  const files = await google.drive.files.list({ folder: "root", pageSize: 3 });
  const first = await tools["get-file"]({ id: files[0].id });
  const users = await api.v2["list-users"]({ team: "core" });
  const ok = await auth["2fa"].verify({ user: users[0], code: "123456" });
  const meta = await svc.$meta();
  console.log(typeof google, typeof google.drive, Object.keys(google.drive.files).sort());
  console.log(Object.getPrototypeOf(api) === null, Object.isFrozen(api.v2));
  return { file: first.name, users: users.length, ok, meta };
}
