#pragma once
// The token key helpers moved to core/accounts/tokenkey.h (package accounts owns every digest);
// this header stays so existing includes keep working.

#include "core/accounts/tokenkey.h"
