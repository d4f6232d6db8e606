// Kubernetes resource quantities, exact (one grammar for the fleet's CEL and topology's
// resource arithmetic).
export {
  addQuantities,
  canonicalQuantity,
  compareQuantities,
  fromCanonicalQuantity,
  isIntegerQuantity,
  negateQuantity,
  parseQuantity,
  type Quantity,
  quantityAsFloat,
  quantityAsInteger,
  quantityFromInteger,
  quantityMilliCeil,
  quantitySign,
} from "./quantity.js";
