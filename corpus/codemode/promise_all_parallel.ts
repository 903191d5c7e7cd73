declare const github: {
  get_user(args: { login: string }): Promise<{ login: string; name: string | null; followers: number }>;
};

interface Row {
  login: string;
  display: string;
  followers: number;
}

const rows: Row[] = await Promise.all(
  logins.map(async (login: string): Promise<Row> => {
    const u = await github.get_user({ login });
    console.log("fetched", u.login);
    return { login, display: u.name ?? `@${u.login}`, followers: u.followers };
  }),
);
rows.sort((a, b) => b.followers - a.followers);
console.table === undefined ? console.log("no console.table") : console.log("console.table exists");
rows;
