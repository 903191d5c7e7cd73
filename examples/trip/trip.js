// Plan a trip: compare forecasts for several cities in parallel, rank them,
// then book a hotel in the best one, falling back when it is sold out.
async function main() {
  const forecasts = await Promise.all(cities.map((city) => get_forecast({ city })));
  const ranked = cities
    .map((city, i) => ({ city, score: forecasts[i].sunny_days * 10 - forecasts[i].rain_mm }))
    .sort((a, b) => b.score - a.score);

  for (const { city } of ranked) {
    try {
      const booking = await book_hotel({ city, nights });
      return { city, confirmation: booking.confirmation, ranked: ranked.map((r) => r.city) };
    } catch (e) {
      if (e.code !== "SOLD_OUT") throw e;
    }
  }
  return { city: null, ranked: ranked.map((r) => r.city) };
}
main();
