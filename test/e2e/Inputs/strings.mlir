// String inputs and outputs for strings_c_api_test.c: upper-cased strings
// and floats formatted as text (kiln IR as input: string tensors are i64
// handles marked kiln.string).
func.func @main(%x: tensor<?xi64> {kiln.name = "x", kiln.string},
                %f: tensor<3xf32> {kiln.name = "f"})
    -> (tensor<?xi64> {kiln.name = "upper", kiln.string},
        tensor<3xi64> {kiln.name = "text", kiln.string}) {
  %0 = kiln.string %x {kind = "upper", element_type = i64} : (tensor<?xi64>) -> tensor<?xi64>
  %1 = kiln.string %f {kind = "format", element_type = i64} : (tensor<3xf32>) -> tensor<3xi64>
  return %0, %1 : tensor<?xi64>, tensor<3xi64>
}
