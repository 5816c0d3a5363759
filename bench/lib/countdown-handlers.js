// The seed's handler (the blog post's cluster example): counts down from 1e7, about 5 ms of CPU.
export function countdown () {
  let n = 1e7
  while (n > 0) n--
  return 'done'
}
