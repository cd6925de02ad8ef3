// The configuration provider's tests need the trait `Configuration` (scripts/test.sh enables every trait).
