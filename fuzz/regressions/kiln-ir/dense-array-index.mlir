!t = index
func.func @main() attributes {a = array<index: 1>, b = array<!t>} {
  return
}
