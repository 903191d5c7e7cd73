const user = get_user({ id: userId });
let note;
try {
  note = get_note({ user: user.id });
} catch (e) {
  note = "no note: " + e.message;
}
const parts = [user.name, note];
parts.join(" / ");
