// Figures a test measures on its way (a time, a count) print only when asked for
// (ZEROMESH_TEST_FIGURES=1 npm test): `npm test` is quiet unless something is wrong.
export function figure (line) {
  if (process.env.ZEROMESH_TEST_FIGURES === '1') console.log(`      ${line}`)
}
