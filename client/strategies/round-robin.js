// Round robin: each pick takes the next peer of the list, so N peers alternate exactly.
export function roundRobin () {
  let next = 0
  return {
    name: 'round-robin',
    select (peers) {
      if (next >= peers.length) next = 0
      return peers[next++]
    },
  }
}
