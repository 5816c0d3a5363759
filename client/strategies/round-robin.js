// Round robin: each pick takes the next peer after the last one picked, in the order the
// client learned them, so N healthy peers alternate exactly and a retry goes to the peer
// after the one that refused.
export function roundRobin () {
  let last = -1 // `order` of the last peer picked
  return {
    name: 'round-robin',
    select (peers) {
      let pick = peers[0]
      for (const p of peers) {
        if (p.order > last) { pick = p; break }
      }
      last = pick.order
      return pick
    },
  }
}
