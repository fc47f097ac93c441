"""CEL validation rules (`x-kubernetes-validations`) evaluated offline as kube-apiserver does, on
whichever CEL engine is installed."""
