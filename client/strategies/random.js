// Random: each pick is uniform over the healthy peers, from the client's random source.
export function random ({ random = Math.random } = {}) {
  return {
    name: 'random',
    select (peers) {
      return peers[Math.floor(random() * peers.length)]
    },
  }
}
