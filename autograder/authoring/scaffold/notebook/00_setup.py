device = helpers.setup()

import numpy as np
from helpers.checks import check_close, passed
