# expect: 2:1: error: import is not in the DSL subset
import numpy as np
